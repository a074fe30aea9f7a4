import { afterEach, describe, expect, it } from "vitest";
import { lint } from "../../src/commands/lint.js";
import { status } from "../../src/commands/status.js";
import { bufferOutput } from "../../src/log/output.js";
import { DEFAULT_GATES, DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Issue 40 §4: a packet that repairs a whole-tree gate already red at the tip (upstream's next commit fixing
 * a broken build). `repairs = ["build"]`: that gate's red at the tip is its baseline rather than a refusal of
 * the run; the packet must turn it green; the surface's other packets wait until it has landed.
 */
const setUp = useLoopRepos(afterEach);

async function statusRows(target: LoopRepo): Promise<{ id: string; state: string; reason: string | null }[]> {
  const output = bufferOutput();
  expect(await status({ cwd: target.dir, id: undefined, json: true, output })).toBe(0);
  return (JSON.parse(output.stdout.join("\n")) as { packets: { id: string; state: string; reason: string | null }[] }).packets;
}

const BUILD_GATE = `${DEFAULT_GATES}
  [[surfaces.app.gates]]
  name = "build"
  run = "node --check src/calc.js"
`;
const FIXED = "export function add(a, b) {\n  return a + b;\n}\n";

/** P01 (double) queued first, then P02, which fixes src/calc.js; the tip's calc.js does not parse, so "build" is red there. */
function brokenTip(options: { repairs?: string; p02?: object[] } = {}): LoopRepo {
  const target = setUp({
    gates: BUILD_GATE,
    script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: options.p02 ?? [{ write: { "src/calc.js": FIXED } }] } },
  });
  target.write("src/calc.js", "export function add(a, b) {\n  return a + b;\n");
  target.write(
    "packets/P02-fix-build.toml",
    `id = "P02"
goal = "Fix the build"
spec_commit = "${target.spec}"
spec_path = "docs/SPEC.md"
allowed_paths = ["src/calc.js"]
${options.repairs ?? 'repairs = ["build"]'}
brief = '''
src/calc.js does not parse: close add's body.
'''

[[invariants]]
id = "adds"
assert = "add(a, b) is a + b"
`,
  );
  target.commit("calc.js broken at the tip; P02 fixes it");
  return target;
}

describe("a packet that repairs a gate red at the tip", () => {
  it("without repairs, the run is refused before anything is claimed, and the refusal names the key", async () => {
    const target = brokenTip({ repairs: "" });
    const { code, out } = await target.run();
    expect(code).toBe(2);
    expect(out).toMatch(/gate "build" is red at the tip [0-9a-f]{10} before any work .*queue a packet that repairs it \(repairs = \["build"\]\)/);
    expect(await target.events()).toEqual([]);
  });

  it("goes first on the red tip and must turn it green; the packet queued before it waits, then lands on the green tip", async () => {
    const target = brokenTip();
    const { code, out } = await target.run();
    expect(out).toContain('surface "app": gate "build" is red at the tip; P02 repairs it and goes first, the surface\'s other packets wait for it to land');
    expect(code, out).toBe(0);
    expect(target.subjects().slice(0, 2)).toEqual(["feat: Add double [P01]", "feat: Fix the build [P02]"]);
    expect(target.read("src/calc.js")).toBe(FIXED);
    // P01, first in the file, was claimed only after P02 had landed.
    const all = await target.events();
    const at = (kind: string, packet: string): number => all.findIndex((event) => event.kind === kind && "packet" in event && event.packet === packet);
    expect(at("merged", "P02")).toBeGreaterThan(-1);
    expect(at("merged", "P02")).toBeLessThan(at("claimed", "P01"));
    expect((await statusRows(target)).map((row) => row.reason)).toEqual([null, null]); // the repair landed: nothing waits
  });

  it("a repair that leaves the gate red is a failed attempt, never landed, and the packets behind it are never claimed", async () => {
    const target = brokenTip({ p02: [{ write: { "src/calc.js": "export function add(a, b) {\n  return a - b;\n" } }, { write: { "src/calc.js": "export const add = (a, b) => {\n" } }] });
    const { code, out } = await target.run();
    expect(code).not.toBe(0);
    expect(out).toMatch(/P02#1 .*build/);
    expect((await target.record("P02"))?.status.state).toBe("blocked");
    expect(await target.events("P01")).toEqual([]);
    expect(target.subjects()[0]).toBe("calc.js broken at the tip; P02 fixes it");
    // status (and the board, whose rows are status's) says why P01 waits, from the run's own record of it.
    const waits = 'waits for P02 to land: it repairs gate "build" of surface "app", red at the tip';
    expect((await statusRows(target)).find((row) => row.id === "P01")).toMatchObject({ state: "queued", reason: waits });
    expect((await target.events()).find((event) => event.kind === "repairs-first")).toMatchObject({ surface: "app", gates: ["build"], repairers: ["P02"], waiting: ["P01"] });
  });

  it("lint: repairs names a whole-tree gate of the packet's surface, never a tests gate, a {files} gate or an unknown one", async () => {
    const target = brokenTip({ repairs: 'repairs = ["test", "syntax", "biuld"]' });
    const output = bufferOutput();
    expect(await lint({ cwd: target.dir, ids: [], json: false, output })).toBe(2);
    const text = output.text();
    expect(text).toContain('packets/P02-fix-build.toml:6: repairs[0]: gate "test" judges tests or changed files, not the whole tree');
    expect(text).toContain('packets/P02-fix-build.toml:6: repairs[1]: gate "syntax" judges tests or changed files');
    expect(text).toContain('packets/P02-fix-build.toml:6: repairs[2]: unknown gate "biuld" on surface "app" (did you mean "build"?); its gates are');
  });
});
