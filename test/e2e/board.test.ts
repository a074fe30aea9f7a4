import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openBoardUrl } from "../../src/status/board-url.js";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, useLoopRepos } from "../helpers/loop-repo.js";
import { usePostgres } from "../helpers/postgres.js";

const setUp = useLoopRepos(afterEach);
const database = usePostgres("the board's PostgreSQL test");
/** The little of the page's DOM the checks read (the tests compile without the DOM's types). */
type PageDocument = { querySelector(selector: string): { textContent: string | null } | null };
const CHROMIUM = ["chromium", "chromium-browser"].map((name) => spawnSync("which", [name], { encoding: "utf8" }).stdout.trim()).find((path) => path !== "");
if (!CHROMIUM) console.warn("skipping the board's browser test: chromium is not installed (.ci/run installs it)");

let boardProcess: ChildProcess | undefined;
afterEach(() => {
  boardProcess?.kill("SIGKILL");
  boardProcess = undefined;
});

/** `factory board` as a person starts it; resolves with the URL it prints. */
function startBoard(cwd: string, env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [FACTORY_BIN, "board"], { cwd, env: { ...process.env, NO_COLOR: "1", ...env } });
  boardProcess = child;
  let printed = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      printed += chunk;
      const url = /board: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(printed)?.[1];
      if (url) resolve(url);
    });
    child.on("exit", (code) => reject(new Error(`factory board exited ${code}: ${printed}`)));
  });
}

/** The local addresses the kernel has a listening TCP socket on for `port` (from /proc/net/tcp and tcp6, hex as the kernel writes them). */
function listeningOn(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A")
      .map((fields) => fields[1]?.split(":")[0] ?? ""),
  );
}

/** Reads a server-sent event stream until an event satisfies `test`; resolves with its data. */
async function untilEvent(url: string, test: (event: { type: string; data: string }) => boolean): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended; last read: ${buffered.slice(-500)}`);
      buffered += decoder.decode(value, { stream: true });
      let end = buffered.indexOf("\n\n");
      while (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null") as string;
        if (test({ type, data })) return data;
        end = buffered.indexOf("\n\n");
      }
    }
  } finally {
    controller.abort();
  }
}

describe("factory board", () => {
  it("shows a ledger whose hash chain breaks (a line edited in place) as an alarm across the table; an intact one shows none", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const ran = runCli(["run"], target.dir, {}, 120_000);
    expect(ran.code, `${ran.stdout}${ran.stderr}`).toBe(0);
    const board = await startBoard(target.dir);
    expect(await (await fetch(board)).text()).not.toContain("<tr id=alarm>");
    boardProcess?.kill("SIGKILL");
    // The same length, one digit changed: only the chain can tell.
    const file = `${target.dir}/.factory/state/ledger.jsonl`;
    const lines = readFileSync(file, "utf8").split("\n");
    const at = lines.findIndex((line) => /"attempt":1/.test(line) && line.includes('"kind":"claimed"'));
    lines[at] = (lines[at] as string).replace('"attempt":1', '"attempt":7');
    writeFileSync(file, lines.join("\n"));
    const again = await startBoard(target.dir);
    const page = await (await fetch(again)).text();
    expect(page).toMatch(new RegExp(`<tr id=alarm><td colspan=7 class=alarm>\\.factory/state/ledger\\.jsonl:${at + 2}: the ledger&#39;s hash chain breaks here`));
  });

  it("on a PostgreSQL ledger shows the shared queue and every worker, and a worker past its lease as stale, pushed live", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const env = { FACTORY_LEDGER_URL: url };
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const night = runCli(["run", "--worker", "night"], target.dir, env, 120_000);
    expect(night.code, `${night.stdout}${night.stderr}`).toBe(0);
    const board = await startBoard(target.dir, env);
    const page = await (await fetch(board)).text();
    // The row is the database's: merged in one attempt (git's trailers alone would say merged, in none).
    expect(page).toMatch(/<tr id="P01" data-state="merged">.*?<td class="state merged">merged<\/td><td class=attempts>1\/2<\/td>/);
    expect(page).toMatch(/<tr id="worker-night"><td>night<\/td><td class="state ended">ended<\/td>/);
    // A worker on another machine that stopped renewing: past its lease it shows as stale, never alive, without a reload.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const seen = untilEvent(new URL("/events", board).href, (event) => event.type === "workers" && event.data.includes("worker-gone"));
    await client.query(
      "INSERT INTO factory_workers (name, run, host, pid, heartbeat_at, lease_until) VALUES ('gone', 'r', 'elsewhere', 4242, now() - interval '3 minutes', now() - interval '1 minute')",
    );
    await client.end();
    expect(await seen).toMatch(/<tr id="worker-gone"><td>gone<\/td><td class="state stale">stale<\/td><td>elsewhere pid 4242<\/td>/);
  });

  it("listens on the loopback address only: the socket the kernel has, not just the URL it prints", async () => {
    const target = setUp({ script: {} });
    const url = await startBoard(target.dir);
    const port = Number(new URL(url).port);
    // 0100007F is 127.0.0.1 as /proc/net/tcp writes it; 0.0.0.0 or :: would be every interface.
    expect(listeningOn(port)).toEqual(["0100007F"]);
    expect(openBoardUrl(target.dir)).toBeUndefined(); // a repository the factory never ran in keeps no state: nothing to name it to
  });

  it.skipIf(!CHROMIUM)(
    "shows a packet move from implementing to merged without a reload, a blocked packet's page shows its evidence, and nothing loads from outside 127.0.0.1",
    async () => {
      const { chromium } = await import("playwright-core");
      const target = setUp({
        script: {
          P01: { implementer: [{ sleep: 3_000, write: { "src/double.js": DOUBLE_JS } }] },
          P02: { implementer: [{ write: { "src/triple.js": "export function triple(n) {\n  return n;\n}\n" } }] },
        },
      });
      target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
      target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
      target.commit("a second packet");

      const url = await startBoard(target.dir);
      const browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ["--no-sandbox"] });
      let night: Promise<unknown> | undefined;
      try {
        const page = await browser.newPage();
        const requested: string[] = [];
        page.on("request", (request) => requested.push(request.url()));
        await page.goto(url);
        expect(await page.textContent("#P01 .state")).toBe("queued");
        expect(await page.textContent("#counts")).toBe("2 queued");
        expect(await page.textContent("#run")).toBe("no run yet");
        await page.evaluate(() => {
          (globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true;
        });

        night = target.run({ keepGoing: true });
        // Once the run keeps state here, the board says where it is, for the run's notifications.
        for (const deadline = Date.now() + 10_000; openBoardUrl(target.dir) !== url && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(openBoardUrl(target.dir)).toBe(url);
        // The page's policy forbids evaluating strings: the checks are functions run in the page.
        const shows = (id: string, state: string, timeout: number) =>
          page.waitForFunction(([row, wanted]) => (globalThis as unknown as { document: PageDocument }).document.querySelector(`#${row} .state`)?.textContent === wanted, [id, state], { timeout });
        await shows("P01", "implementing", 30_000);
        await shows("P01", "merged", 60_000);
        expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true); // the same page: no reload
        await night;
        await shows("P02", "blocked", 30_000);
        // The header follows the rows live: counts by state and the spend.
        await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.querySelector("#counts")?.textContent === "1 blocked · 1 merged", undefined, {
          timeout: 10_000,
        });
        expect(await page.textContent("#spent")).toMatch(/^\$\d+\.\d\d$/);

        await page.click("#P02 a");
        await page.waitForURL(/\/packet\/P02$/);
        const history = (await page.textContent("#history")) ?? "";
        expect(history).toContain("test/triple.test.js: no test of this planted file passes");
        expect(await page.textContent("pre.cmd")).toContain("factory unblock P02");
        expect(await page.textContent("#diff")).toContain("src/triple.js");
        expect(await page.textContent("#diff .add")).toMatch(/^\+/); // added lines coloured
        // A reload shows the run that ended, in the reader's local time (no milliseconds, no ISO "T").
        await page.goto(url);
        const run = (await page.textContent("#run")) ?? "";
        expect(run).toMatch(/^the last run (drained|halted) /);
        expect(run).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d|\dT\d/);
        expect(requested.some((address) => address.endsWith("/favicon.ico"))).toBe(false);

        expect(requested.length).toBeGreaterThan(2);
        expect(requested.filter((address) => !address.startsWith(url))).toEqual([]);
      } finally {
        await browser.close();
        await night?.catch(() => undefined); // never leave the run going on a repository about to be removed
      }
      const stopped = new Promise<number | null>((resolve) => boardProcess?.on("exit", resolve));
      boardProcess?.kill("SIGINT");
      expect(await stopped).toBe(0);
      expect(openBoardUrl(target.dir)).toBeUndefined(); // stopped: no longer named
    },
    150_000,
  );

  it("serves nothing but GET, only on 127.0.0.1, and follows the queue as the target moves", async () => {
    const target = setUp({ script: {} });
    const url = await startBoard(target.dir);
    expect(new URL(url).hostname).toBe("127.0.0.1");
    const posted = await fetch(`${url}packet/P01`, { method: "POST" });
    expect(posted.status).toBe(405);
    const missing = await fetch(`${url}packet/NOPE`);
    expect(missing.status).toBe(404);
    // A second board on the same port says what to do.
    const second = runCli(["board", "--port", new URL(url).port], target.dir);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain("the port is in use; choose another with --port N");
    const board = await fetch(url);
    expect(board.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await board.text()).toContain('<tr id="P01" data-state="queued">');

    // A packet committed while the board is open appears on it: the board follows the target's tip.
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple"));
    target.commit("a packet added while the board is open");
    let shown = "";
    for (const deadline = Date.now() + 20_000; !shown.includes('<tr id="P02" ') && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      shown = await (await fetch(url)).text();
    }
    expect(shown).toContain('<tr id="P02" data-state="queued">');
  }, 60_000);
});
