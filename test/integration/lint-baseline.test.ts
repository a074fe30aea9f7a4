import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, gateResults, useLoopRepos } from "../helpers/loop-repo.js";

/** A lint gate judges what the change brought: a file's existing findings never block a packet that touches it. */
const setUp = useLoopRepos(afterEach);
const GATES = `
  [[surfaces.app.gates]]
  name = "todo-lint"
  run = "! grep -Hn TODO {files}"

  [[surfaces.app.gates]]
  name = "test"
  run = "node --test --test-reporter=junit --test-reporter-destination={junit} $(find test -type f -name '*.*js' | sort)"
  tests = true
`;
const CALC_WITH_TODO = "// TODO: handle overflow\nexport function add(a, b) {\n  return a + b;\n}\n";

function target(calc: string) {
  const repo = setUp({ gates: GATES, allowed: ["src/double.js", "src/calc.js"], forbidden: [], script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS, "src/calc.js": calc } }] } } });
  repo.write("src/calc.js", CALC_WITH_TODO);
  repo.commit("a finding already in calc.js");
  return repo;
}

describe("a lint gate on the changed files", () => {
  it("passes a change to a file whose only findings were there before it", async () => {
    const repo = target(`${CALC_WITH_TODO}export const sub = (a, b) => a - b;\n`);
    const { code, out } = await repo.run();
    expect(out).toContain("gate todo-lint: pass — its findings in the changed files were all there before this change");
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });

  it("fails a finding the change brought, even in a file that had one, naming it", async () => {
    const repo = target(`// TODO: handle overflow\nexport function add(a, b) {\n  // TODO: this is wrong\n  return a + b;\n}\n`);
    const { code, out } = await repo.run();
    expect(out).toMatch(/gate todo-lint: fail — 1 new finding\(s\) in the changed files: src\/calc\.js:3: {2}\/\/ TODO: this is wrong/);
    expect(gateResults(await repo.events("P01"), 1)).toMatchObject({ "todo-lint": "fail" });
    expect(code).toBe(1);
    expect(repo.read("src/calc.js")).toBe(CALC_WITH_TODO); // nothing landed
  });
});
