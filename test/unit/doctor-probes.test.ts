import { describe, expect, it } from "vitest";
import { failingTestBeside, filesRunBy, provenBy, skipMarkerFor } from "../../src/doctor/probes.js";
import { parseUnifiedDiff } from "../../src/gates/diff-parse.js";
import { checkTamper } from "../../src/guards/tamper.js";

describe("doctor's failing test", () => {
  it("is named so the same runner collects it, and imports its test function as the file beside it does", () => {
    expect(failingTestBeside({ path: "tests/test_calc.py", text: "def test_add(): pass\n" })?.path).toBe("tests/test_factory_doctor_probe.py");
    expect(failingTestBeside({ path: "pkg/calc_test.py", text: "" })?.path).toBe("pkg/factory_doctor_probe_test.py");
    const vitest = failingTestBeside({ path: "src/a.spec.ts", text: 'import { it, expect } from "vitest";\n' });
    expect(vitest).toEqual({ path: "src/factory-doctor-probe.spec.ts", text: expect.stringMatching(/^import \{ it \} from "vitest";\nit\("factory doctor probe"/) });
    expect(failingTestBeside({ path: "test/a.test.cjs", text: 'const test = require("node:test");\n' })?.text).toMatch(/^const \{ it \} = require\("node:test"\);/);
    expect(failingTestBeside({ path: "__tests__/a.test.jsx", text: "it('renders', () => {});\n" })?.text).toMatch(/^it\("factory doctor probe"/);
    expect(failingTestBeside({ path: "test/test-a.js", text: "" })?.path).toBe("test/test-factory-doctor-probe.js");
    expect(failingTestBeside({ path: "spec/a_spec.rb", text: "" })).toBeUndefined();
    // ava: its default export, under the name the file gives it; ava fails a test by t.fail, and has no global `it`.
    expect(failingTestBeside({ path: "test.js", text: 'import avaTest from "ava";\navaTest("adds", (t) => t.pass());\n' })).toEqual({
      path: "test-factory-doctor-probe.js",
      text: 'import avaTest from "ava";\navaTest("factory doctor probe", (t) => {\n  t.fail("factory doctor: this test fails on purpose");\n});\n',
    });
    expect(failingTestBeside({ path: "test/a.test.cjs", text: 'const test = require("ava");\n' })?.text).toMatch(
      /^const test = require\("ava"\);\ntest\("factory doctor probe", \(t\) => \{\n {2}t\.fail\(/,
    );
  });
});

describe("doctor's skip marker", () => {
  it("is one the tamper gate names, in Python and JavaScript", () => {
    for (const path of ["tests/test_a.py", "test/a.test.ts"]) {
      const added = (skipMarkerFor(path) ?? "")
        .split("\n")
        .map((line) => `+${line}`)
        .join("\n");
      const lines = added.split("\n").length;
      const diff = `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1,0 +2,${lines} @@\n${added}\n`;
      expect(checkTamper({ files: parseUnifiedDiff(diff), allowed: undefined }).status).toBe("fail");
    }
  });
});

describe("the files a tests gate runs", () => {
  it("are tied by file, by pytest's dotted module, or by a test name when the report names no file (node:test)", () => {
    const results = [
      { id: "tests.test_calc::test_add", outcome: "passed" as const },
      { id: "test::adds", outcome: "passed" as const },
      { id: "test::subtracts", outcome: "failed" as const },
      { id: "x::y", outcome: "passed" as const, file: "src/a.spec.ts" },
    ];
    const files = [
      { path: "py/tests/test_calc.py", text: "def test_add():\n    pass\n" },
      { path: "test/calc.test.js", text: 'test("adds", () => {});\ntest("subtracts", () => {});\n' },
      { path: "src/a.spec.ts", text: "" },
      { path: "test/other.test.js", text: 'test("other", () => {});\n' },
    ];
    expect(filesRunBy(results, files, (path) => [path, path.replace(/^py\//, "")])).toEqual([
      { path: "py/tests/test_calc.py", passing: 1 },
      { path: "test/calc.test.js", passing: 1 },
      { path: "src/a.spec.ts", passing: 1 },
    ]);
  });
});

describe("a proof line", () => {
  const report = (status: "pass" | "fail") => ({ name: "scope", status, summary: status === "fail" ? "x: out of scope" : "all in scope", findings: [], durationMs: 0 });
  it("is armed only when the guard fails the violation and passes honest work", () => {
    expect(provenBy("guard scope", report("fail"), report("pass"), "a path out of scope")).toEqual({ what: "guard scope" });
    expect(provenBy("guard scope", report("pass"), report("pass"), "a path out of scope").notArmed).toBe('it gave "pass" on a path out of scope (all in scope)');
    expect(provenBy("guard scope", report("fail"), report("fail"), "a path out of scope").notArmed).toBe("it fails on honest work too: x: out of scope");
  });
});
