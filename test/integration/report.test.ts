import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { approve } from "../../src/commands/approve.js";
import { report } from "../../src/commands/report.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
const CHROMIUM = ["chromium", "chromium-browser"].find((name) => spawnSync("which", [name]).status === 0);
if (!CHROMIUM) console.warn("skipping the headless-browser check of the HTML brief: chromium is not installed (.ci/run installs it)");

/** A night: P01 held for a person with its rulings, P02 blocked, P03 never attempted (it waits for P02). */
async function night() {
  const log = join(tmpdir(), `factory-notify-${process.pid}-${Date.now()}.jsonl`);
  const target = setUp({
    packet: 'gate = "human"',
    config: `\n[notify]\ncommand = "cat >> ${log}"`,
    script: {
      P01: {
        implementer: [{ write: { "src/double.js": DOUBLE_JS }, result: { summary: "Added double <fast>.", deviations: [{ from_packet: "n * 2", reason: "used n + n" }] } }],
        reviewer: [{ evidence: "src/double.js:2" }],
      },
      P02: { implementer: [{ write: { "src/triple.js": "export function triple(n) {\n  return n;\n}\n" } }] },
    },
  });
  target.write(
    "packets/P02-triple.toml",
    target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js").replace('gate = "human"', ""),
  );
  target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
  target.write("packets/P03-quad.toml", target.read("packets/P02-triple.toml").replaceAll("P02", "P03").replace("Add triple", "Add quad").replace('id = "P03"', 'id = "P03"\nrequires = ["P02"]'));
  target.commit("two more packets");
  const { code, out } = await target.run({ keepGoing: true });
  const notified = existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];
  rmSync(log, { force: true });
  return { target, code, out, notified, log };
}

describe("factory report: the morning brief", () => {
  it("says what waits for a person (the agent's claims, the rulings with the evidence's line, the commands), what blocked and what was not attempted, and the spend; the run wrote it and told notify; --html writes a self-contained page", async () => {
    const { target, out, notified, log } = await night();
    expect(out).toMatch(/morning brief: factory report \(also .*\.factory\/runs\/report-[^)]+\.html\)/);
    const ended = notified.find((summary) => summary.event === "run-ended");
    expect(ended?.report).toMatch(/\.factory\/runs\/report-[0-9a-f-]+\.html$/);
    expect(readFileSync(String(ended?.report), "utf8")).toContain("Held for you (1)");
    const output = bufferOutput();
    expect(await report({ cwd: target.dir, output })).toBe(0);
    const text = output.text();
    expect(text).toContain("Held for you (1)\n  P01  attempt 1");
    expect(text).toContain("the agent says: Added double <fast>.");
    expect(text).toContain('deviation from "n * 2": used n + n');
    expect(text).toContain("doubles: held at src/double.js:2  | return n * 2;");
    expect(text).toContain("factory approve P01");
    // The blocked packet with the evidence of its last attempt, its next command, and the packet waiting behind it.
    expect(text).toMatch(
      /Blocked \(1\)\n {2}P02 {2}\$\d+\.\d\d {2}Add triple\n {4}out of attempts[^\n]*\[[0-9a-f]{12}\]\n {4}- Gate "test" failed: 1 planted test\(s\) not passing of 2 \| test\/triple\.test\.js: no test of this planted file passes\n {4}factory show P02[^\n]*\n {4}waiting behind it: P03 \(Add quad\)/,
    );
    expect(text).toContain("Not attempted (0)");
    const json = bufferOutput();
    expect(await report({ cwd: target.dir, json: true, output: json })).toBe(0);
    const brief = JSON.parse(json.stdout.join("\n")) as { blocked: { id: string; evidence: string[]; waiting: { id: string }[] }[]; held: { id: string }[]; notAttempted: unknown[] };
    expect(brief.blocked).toMatchObject([{ id: "P02", evidence: [expect.stringContaining("test/triple.test.js: no test of this planted file passes")], waiting: [{ id: "P03" }] }]);
    expect(brief.held.map((row) => row.id)).toEqual(["P01"]);
    expect(brief.notAttempted).toEqual([]);
    expect(text).toMatch(/Spend: \$\d+\.\d\d — implementer \$\d+\.\d\d, reviewer \$\d+\.\d\d/);

    // --html: a self-contained page a browser renders with the same facts; bad input is refused, naming it.
    const dir = mkdtempSync(join(tmpdir(), "factory-brief-"));
    try {
      const file = join(dir, "brief.html");
      const written = bufferOutput();
      expect(await report({ cwd: target.dir, html: file, output: written })).toBe(0);
      expect(written.stdout).toEqual([`written: ${file}`]); // the page only: not the text brief too
      const html = readFileSync(file, "utf8");
      // A relative path is the person's, from where they are, and said back the same way.
      const inRepo = bufferOutput();
      expect(await report({ cwd: target.dir, html: "brief.html", output: inRepo })).toBe(0);
      expect(inRepo.stdout).toEqual(["written: brief.html"]);
      expect(readFileSync(join(target.dir, "brief.html"), "utf8")).toBe(html);
      expect(html).not.toMatch(/<script|<link|src=|https?:\/\//);
      expect(html).toContain("Added double &lt;fast&gt;.");
      const again = bufferOutput();
      expect(await report({ cwd: target.dir, html: file, output: again })).toBe(2);
      expect(again.text()).toContain("exists; name a new file");
      const badDate = bufferOutput();
      expect(await report({ cwd: target.dir, since: "yesterday-ish", output: badDate })).toBe(2);
      expect(badDate.text()).toContain('--since: "yesterday-ish" is not a date');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(join(dir, "brief.html"))).toBe(false);

    // A person approves P01: the brief shows it merged, with the test counts of the attempt that landed.
    const approved = await approve({
      cwd: target.dir,
      id: "P01",
      yes: true,
      output: bufferOutput(),
      signal: new AbortController().signal,
      input: Object.assign(Readable.from([]), { isTTY: false }),
      env: {},
    });
    expect(approved).toBe(0);
    // The approval is told too, through the same notify command (and its log removed again).
    expect(JSON.parse(readFileSync(log, "utf8").trim())).toMatchObject({ event: "approved", packet: "P01" });
    rmSync(log, { force: true });
    const after = bufferOutput();
    expect(await report({ cwd: target.dir, since: "2000-01-01", output: after })).toBe(0);
    expect(after.text()).toMatch(/Merged \(1\)\n {2}P01 {2}[0-9a-f]{10} {2}1 attempt\(s\)[^\n]*Add double {2}\[tests test \d+\/\d+\]/);
  }, 150_000);

  it.skipIf(!CHROMIUM)(
    "the HTML brief renders in headless Chromium with the same facts",
    async () => {
      const { target } = await night();
      const dir = mkdtempSync(join(tmpdir(), "factory-brief-"));
      try {
        const file = join(dir, "brief.html");
        expect(await report({ cwd: target.dir, html: file, output: bufferOutput() })).toBe(0);
        const rendered = spawnSync(CHROMIUM as string, ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", `file://${file}`], { encoding: "utf8", timeout: 60_000 });
        expect(rendered.status).toBe(0);
        const shown = rendered.stdout
          .replace(/<[^>]+>/g, " ")
          .replace(/&lt;/g, "<")
          .replace(/&gt;/g, ">")
          .replace(/\s+/g, " ");
        expect(shown).toContain("Held for you (1)");
        expect(shown).toContain("The agent says (a claim): Added double <fast>.");
        expect(shown).toContain("doubles held src/double.js:2 return n * 2;");
        expect(shown).toContain("Blocked (1) P02");
        expect(shown).toContain("test/triple.test.js: no test of this planted file passes");
        expect(shown).toContain("Waiting behind it: P03 Add quad");
        expect(shown).toContain("Not attempted (0) none");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
