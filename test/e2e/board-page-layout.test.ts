import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { boardPage, packetPage } from "../../src/status/board-page.js";

const CHROMIUM = ["chromium", "chromium-browser"].map((name) => spawnSync("which", [name], { encoding: "utf8" }).stdout.trim()).find((path) => path !== "");
if (!CHROMIUM) console.warn("skipping the board pages' layout test: chromium is not installed (.ci/run installs it)");

/** The little of the page's DOM the check reads (the tests compile without the DOM's types). */
type Box = { scrollWidth: number; clientWidth: number };
type PageWindow = { innerWidth: number; document: { documentElement: Box; querySelector(selector: string): Box | null } };

/** A blocked packet's reason as the night leaves it: one long line with a long path and no space to break at. */
const REASON = `blocked: tests gate "test" failed: 1 planted test(s) not passing of 12; test/${"very-long-directory-name/".repeat(8)}planted.test.js::a case whose title is long enough to need a line of its own and more`;

describe.skipIf(!CHROMIUM)("the board's pages in a narrow window", () => {
  it("wrap a packet's long history, next commands, goal and reasons instead of clipping them; the diff scrolls inside its own box", async () => {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage({ viewport: { width: 640, height: 800 } });
      await page.setContent(
        packetPage({
          id: "P07",
          goal: `Parse ${"the-whole-configuration-file-".repeat(4)}at once`,
          state: "blocked",
          history: ["attempt 1: implementing", REASON],
          diff: `diff --git a/src/x.js b/src/x.js\n+${"const aVeryLongIdentifierName = 1; ".repeat(12)}`,
          next: [`factory unblock P07   # after fixing ${"packets/supplied/P07/test/".repeat(4)}planted.test.js`],
        }),
      );
      const widths = (selector: string) =>
        page.evaluate((wanted) => {
          const window = globalThis as unknown as PageWindow;
          const box = wanted === "page" ? window.document.documentElement : window.document.querySelector(wanted);
          return { scroll: box?.scrollWidth ?? -1, client: box?.clientWidth ?? -1, window: window.innerWidth };
        }, selector);
      const whole = await widths("page");
      expect(whole.scroll, "the page is wider than the window").toBeLessThanOrEqual(whole.window);
      for (const selector of ["#history", "pre.cmd", "h1"]) {
        const box = await widths(selector);
        expect(box.scroll, `${selector} is cut off`).toBeLessThanOrEqual(box.client);
      }
      expect(await page.textContent("#history")).toContain("and more");
      // Code keeps its lines: the diff scrolls within its own box, the page does not.
      const diff = await widths("#diff");
      expect(diff.scroll).toBeGreaterThan(diff.client);

      await page.setContent(
        boardPage({
          root: `/home/someone/${"projects/".repeat(10)}repository`,
          branch: "main",
          rows: [{ id: "P07", goal: "Parse it", state: "blocked", attempts: "2/3", costUsd: 0.12, reason: REASON }],
        }),
      );
      const board = await widths("page");
      expect(board.scroll, "the board is wider than the window").toBeLessThanOrEqual(board.window);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
