import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testGate } from "../../src/config/presets.js";
import { DOUBLE_JS, gatesRunning, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";
import { publishedTools } from "../helpers/published.js";

/**
 * A packet on an ava project as ava's defaults lay it out (one `test.js` at the root), through the gate `factory
 * init` writes for ava (TAP to {tap}). The planted test is the project's second test file: ava then puts each
 * file's name before its titles, and the factory must still see the team's `adds` as the case it was.
 */
const AVA = publishedTools(["ava@6.4.1"]);
if (!AVA.ok) console.warn(`skipping a packet through ava: ${AVA.reason}`);

const setUp = useLoopRepos(afterEach);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const PLANTED = 'import test from "ava";\nimport { double } from "../src/double.js";\n\ntest("doubles", (t) => {\n  t.is(double(21), 42);\n});\n';

function avaProject(options: Pick<Parameters<typeof setUp>[0], "script" | "allowed" | "forbidden">): LoopRepo {
  // The install copies the cached ava in, from a copy outside HOME (the sandbox shows no home directory).
  const modules = mkdtempSync(join(tmpdir(), "factory-ava-"));
  cleanups.push(() => rmSync(modules, { recursive: true, force: true }));
  cpSync((AVA as { modules: string }).modules, modules, { recursive: true, verbatimSymlinks: true });
  const gate = testGate({ name: "app", dir: ".", kind: "node", testRunner: "ava", packageManager: "npm" }, true) as string;
  const target = setUp({ ...options, gates: `install = "cp -R ${modules} node_modules"\n${gatesRunning(gate)}`, planted: PLANTED });
  target.git("rm", "-q", "test/calc.test.js");
  target.write("test.js", 'import test from "ava";\nimport { add } from "./src/calc.js";\n\ntest("adds", (t) => {\n  t.is(add(2, 2), 4);\n});\n');
  target.write(".gitignore", `${target.read(".gitignore")}node_modules/\n`);
  target.commit("an ava project: one test.js at the root");
  return target;
}

describe.skipIf(!AVA.ok)("a packet on an ava project", () => {
  it("merges a right implementation: the planted test beside the lone test.js renames no case of the team's", async () => {
    const target = avaProject({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(out).toMatch(/gate test: pass — 2\/2 passed/);
    expect(code, out).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    // The team's case is the one it was: the planting took none away (its file could not load yet: no case of its own).
    const planted = (await target.events("P01")).find((event) => event.kind === "planted");
    expect(planted && "cases" in planted ? planted.cases : undefined).toEqual({ test: { cases: [], files: ["test/double.test.js"] } });
  }, 300_000);

  it("blocks a wrong one, naming the planted case; a team's case it breaks is a regression", async () => {
    const wrong = "export function double(n) {\n  return n + 2;\n}\n";
    const breaks = "export function add(a, b) {\n  return a - b;\n}\n";
    const attempt = { write: { "src/double.js": wrong, "src/calc.js": breaks } };
    const target = avaProject({ script: { P01: { implementer: [attempt, attempt, attempt] } }, allowed: ["src/double.js", "src/calc.js"], forbidden: [] });
    const { out } = await target.run();
    expect(out).toMatch(/gate test: fail — 1 planted test\(s\) not passing, 1 regression\(s\) of 2/);
    expect((await target.record("P01"))?.status.state).toBe("blocked");
  }, 300_000);
});
