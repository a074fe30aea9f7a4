import { describe, expect, it } from "vitest";
import { collectedFiles, declaredTestPatterns, isCodeFile, isTestByFacts, NO_TEST_FACTS, pytestCollection } from "../../src/gates/test-files.js";

describe("what a test is, from the runner at the tip", () => {
  const tip = ["pkg/__init__.py", "pkg/calc.py", "pkg/tests.py", "checks/check_calc.py", "tests/test_calc.py", "test.js", "lib/index.js", "src/a.test.ts"];

  it("names the files the report has cases of: pytest's dotted classnames (with a class), a file attribute, node:test's path names", () => {
    const results = [
      { id: "tests.test_calc::test_add", outcome: "passed" as const },
      { id: "checks.check_calc.TestCalc::test_sum", outcome: "passed" as const },
      { id: "pkg.tests::test_django_style", outcome: "passed" as const },
      { id: "pkg.calc::pkg.calc.add", outcome: "passed" as const }, // a doctest
      { id: "adds::works", outcome: "passed" as const, file: "test.js" },
      { id: "src/a.test.ts", outcome: "failed" as const },
    ];
    expect(collectedFiles(results, tip, ".")).toEqual(["checks/check_calc.py", "pkg/calc.py", "pkg/tests.py", "src/a.test.ts", "test.js", "tests/test_calc.py"]);
  });

  it("names nothing the report does not tie to a file of the tip", () => {
    expect(collectedFiles([{ id: "elsewhere.test_x::test_y", outcome: "passed" }], tip, ".")).toEqual([]);
  });

  it("reads the files a surface's report names relative to its directory", () => {
    expect(collectedFiles([{ id: "tests.test_api::test_get", outcome: "passed" }], ["api/tests/test_api.py", "tests/test_api.py"], "api")).toEqual(["api/tests/test_api.py"]);
  });

  it("a file the facts name is a test, and the conventional names stay one; a plain module is not", () => {
    const facts = { collected: ["pkg/tests.py"], patterns: ["**/check_*.py", "test.js"], doctestModules: false, roots: [] };
    expect(isTestByFacts(facts, "pkg/tests.py")).toBe(true);
    expect(isTestByFacts(facts, "checks/check_new.py")).toBe(true);
    expect(isTestByFacts(facts, "test.js")).toBe(true);
    expect(isTestByFacts(facts, "tests/test_calc.py")).toBe(true);
    expect(isTestByFacts(facts, "pkg/calc.py")).toBe(false);
    expect(isTestByFacts(NO_TEST_FACTS, "pkg/tests.py")).toBe(false);
    // ava's default names are tests by name alone: test.js at the root or in src/, test-*.js anywhere.
    for (const path of ["test.js", "src/test.mjs", "test-parse.js", "lib/test-parse.ts"]) expect(isTestByFacts(NO_TEST_FACTS, path), path).toBe(true);
    for (const path of ["testing.js", "contest.js", "lib/latest-parse.js", "test.json"]) expect(isTestByFacts(NO_TEST_FACTS, path), path).toBe(false);
  });

  it("code is a source module, data is the rest", () => {
    expect(["a.py", "b.mjs", "c.tsx", "d.cts"].every(isCodeFile)).toBe(true);
    expect(["cases.json", "data.csv", "README.md", "table.yaml"].some(isCodeFile)).toBe(false);
  });
});

describe("pytest's own configuration", () => {
  it("reads python_files (under testpaths) and --doctest-modules from pytest.ini", () => {
    const texts = new Map([["pytest.ini", "[pytest]\ntestpaths = checks tests\npython_files = check_*.py\n    test_*.py\naddopts = -q --doctest-modules\n"]]);
    expect(pytestCollection(texts, ".")).toEqual({
      patterns: ["checks/**/check_*.py", "tests/**/check_*.py", "checks/**/test_*.py", "tests/**/test_*.py"],
      doctestModules: true,
      roots: ["checks", "tests"],
    });
  });

  it("reads pyproject.toml's [tool.pytest.ini_options], arrays on one line or several, in a surface's directory", () => {
    const texts = new Map([["api/pyproject.toml", '[project]\nname = "x"\n\n[tool.pytest.ini_options]\npython_files = [\n  "tests.py",\n  "test_*.py",\n]\naddopts = ["-q"]\n']]);
    expect(pytestCollection(texts, "api")).toEqual({ patterns: ["api/**/tests.py", "api/**/test_*.py"], doctestModules: false, roots: [] });
  });

  it("reads setup.cfg's [tool:pytest] and ignores other sections' keys of the same name", () => {
    const texts = new Map([["setup.cfg", "[flake8]\npython_files = nope.py\n[tool:pytest]\npython_files = check_*.py\n"]]);
    expect(pytestCollection(texts, ".").patterns).toEqual(["**/check_*.py"]);
  });

  it("says nothing without a pytest section", () => {
    expect(pytestCollection(new Map([["pyproject.toml", "[project]\nname = 'x'\n"]]), ".")).toEqual({ patterns: [], doctestModules: false, roots: [] });
  });

  it("a surface's declared tests are globs under its directory", () => {
    expect(declaredTestPatterns("js", ["test.js", "test-*.js"])).toEqual(["js/test.js", "js/test-*.js"]);
    expect(declaredTestPatterns(".", undefined)).toEqual([]);
  });
});
