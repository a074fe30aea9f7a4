import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/gates/command.js";
import type { TestResult } from "../../src/gates/junit.js";
import { unearnedLockFiles } from "../../src/gates/lock-files.js";
import { checkPlanted, compareWithBaseline, isTestFile, plantedCases } from "../../src/gates/test-compare.js";
import { baselineProblem } from "../../src/loop/baseline.js";

const pass = (id: string, extra: Partial<TestResult> = {}): TestResult => ({ id, outcome: "passed", ...extra });
const fail = (id: string, extra: Partial<TestResult> = {}): TestResult => ({ id, outcome: "failed", ...extra });
const skip = (id: string): TestResult => ({ id, outcome: "skipped" });

describe("compareWithBaseline", () => {
  const baseline = [pass("a"), fail("b"), pass("c"), pass("d"), pass("e")];

  it("blames a test that passed before and now fails, is missing or is skipped; not one that already failed", () => {
    const now = [fail("a"), fail("b"), skip("c"), pass("e"), fail("planted"), pass("new-ok")];
    expect(compareWithBaseline(baseline, now)).toEqual({
      total: 6,
      passed: 2,
      newFailures: ["planted"],
      preexisting: ["b"],
      regressions: [
        { id: "a", now: "failed" },
        { id: "c", now: "skipped" },
        { id: "d", now: "missing" },
      ],
    });
  });

  it("stays quiet when every test is still there and passes", () => {
    expect(compareWithBaseline(baseline, [...baseline, pass("f")])).toMatchObject({ regressions: [], newFailures: [] });
  });

  it("accepts a test split into parametrized cases that all pass, not one whose cases fail", () => {
    const split = [pass("b"), pass("c"), pass("d"), pass("e"), pass("a[1]"), pass("a[2]")];
    expect(compareWithBaseline(baseline, split).regressions).toEqual([]);
    expect(compareWithBaseline(baseline, [...split.slice(0, 4), pass("a[1]"), fail("a[2]")]).regressions).toEqual([{ id: "a", now: "missing" }]);
  });

  it("counts a test reported several times as failed if any report failed", () => {
    expect(compareWithBaseline(baseline, [...baseline.slice(1), pass("a"), fail("a")]).regressions).toEqual([{ id: "a", now: "failed" }]);
  });
});

describe("plantedCases (right after planting)", () => {
  const baseline = [pass("tests.test_calc::test_add")];

  it("attributes pytest cases to their module and finds the ones that already pass", () => {
    const now = [...baseline, fail("tests.test_double::test_double"), pass("tests.test_double::test_zero")];
    expect(plantedCases({ files: ["tests/test_double.py"], surfaceDir: ".", baseline, now })).toEqual({
      cases: ["tests.test_double::test_double", "tests.test_double::test_zero"],
      files: ["tests/test_double.py"],
      passing: ["tests.test_double::test_zero"],
    });
  });

  it("counts a collection failure of the planted module as having run (no case to require yet)", () => {
    const now = [{ id: "tests.test_double", outcome: "failed" as const, collectionError: true as const }];
    expect(plantedCases({ files: ["tests/test_double.py"], surfaceDir: ".", baseline, now })).toEqual({ cases: [], files: ["tests/test_double.py"], passing: [] });
  });

  it("finds nothing for a planted file the runner never collected", () => {
    expect(plantedCases({ files: ["other/test_double.py"], surfaceDir: ".", baseline, now: baseline })).toEqual({ cases: [], files: [], passing: [] });
  });

  it("with a runner that names no files (node:test), takes the cases new since the baseline and a load failure named by path", () => {
    const nodeBaseline = [pass("test::adds")];
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [...nodeBaseline, fail("test::doubles")] })).toEqual({
      cases: ["test::doubles"],
      files: ["test/double.test.js"],
      passing: [],
    });
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [...nodeBaseline, fail("test::test/double.test.js")] })).toEqual({
      cases: [],
      files: ["test/double.test.js"],
      passing: [],
    });
  });

  it("matches paths relative to the surface directory", () => {
    const now = [fail("tests.test_double::test_double")];
    expect(plantedCases({ files: ["api/tests/test_double.py"], surfaceDir: "api", baseline: [], now }).files).toEqual(["api/tests/test_double.py"]);
  });
});

describe("checkPlanted (after the implementation)", () => {
  const planted = { cases: ["tests.test_double::test_double"], files: ["tests/test_double.py"] };
  const baseline = [pass("tests.test_calc::test_add")];

  it("stays quiet when every planted case is there and passes", () => {
    expect(checkPlanted({ planted, surfaceDir: ".", baseline, now: [...baseline, pass("tests.test_double::test_double")] }).findings).toEqual([]);
  });

  it("names a planted case that is missing, skipped or failing", () => {
    expect(checkPlanted({ planted, surfaceDir: ".", baseline, now: baseline }).findings).toEqual([
      { id: "tests.test_double::test_double", message: "planted test is missing: it did not run" },
      { id: "tests/test_double.py", message: "planted test file yields no test case now: it did not run" },
    ]);
    expect(checkPlanted({ planted, surfaceDir: ".", baseline, now: [...baseline, skip("tests.test_double::test_double")] }).findings[0]?.message).toBe("planted test was skipped");
    expect(checkPlanted({ planted, surfaceDir: ".", baseline, now: [...baseline, fail("tests.test_double::test_double")] }).findings[0]?.message).toBe("planted test fails");
  });

  it("fails a planted file that node:test reports by its path as passing: it ran no test of its own, whatever else passes", () => {
    const nodeFile = { cases: [], files: ["test/double.test.js"] };
    const now = [pass("test::adds"), pass("test::test/double.test.js"), pass("test::the agent's own")];
    expect(checkPlanted({ planted: nodeFile, surfaceDir: ".", baseline: [pass("test::adds")], now }).findings).toEqual([
      { id: "test/double.test.js", message: "planted test file ran no test of its own: something ended it early" },
    ]);
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: [pass("test::adds")], now: [pass("test::adds"), pass("test::test/double.test.js")] }).files).toEqual([]);
  });

  it("requires a planted file first seen as a collection error to yield passing cases", () => {
    const fileOnly = { cases: [], files: ["tests/test_double.py"] };
    expect(checkPlanted({ planted: fileOnly, surfaceDir: ".", baseline, now: [...baseline, pass("tests.test_double::test_double")] }).findings).toEqual([]);
    expect(checkPlanted({ planted: fileOnly, surfaceDir: ".", baseline, now: [{ id: "tests.test_double", outcome: "failed", collectionError: true }] }).findings).toEqual([
      { id: "tests/test_double.py", message: "planted test file could not be collected or loaded" },
    ]);
  });
});

describe("judgeTests", () => {
  const base = { name: "pytest", durationMs: 1 };
  const baseline = [pass("a")];
  const judge = (exitCode: number, results: TestResult[], planted = { cases: [] as string[], files: [] as string[] }) => judgeTests({ base, exitCode, results, baseline, planted, surfaceDir: "." });

  it("fails a runner that exits non-zero while its report shows no failing test", () => {
    expect(judge(2, [pass("a")])).toMatchObject({ status: "fail", summary: expect.stringContaining("exited 2 but its report shows no failing test") });
    expect(judge(2, [pass("a"), { id: "tests.test_x", outcome: "failed", collectionError: true }]).status).toBe("fail");
  });

  it("fails zero test cases, including a report of collection errors only", () => {
    expect(judge(0, []).summary).toBe("ran zero tests");
    expect(judge(2, [{ id: "tests.test_x", outcome: "failed", collectionError: true }]).summary).toContain("could not collect tests.test_x");
  });

  it("fails a planted test that vanished, and passes honest work", () => {
    expect(judge(0, [pass("a")], { cases: ["p"], files: [] })).toMatchObject({ status: "fail", findings: [{ file: "p", message: "planted test is missing: it did not run" }] });
    expect(judge(0, [pass("a"), pass("p")], { cases: ["p"], files: [] })).toMatchObject({ status: "pass", summary: "2/2 passed" });
  });
});

describe("baselineProblem", () => {
  it("refuses a run with no test case, only collection errors, or a failure exit without a failing test", () => {
    expect(baselineProblem({ results: [], exitCode: 4, tail: undefined })).toBe("it ran no test");
    expect(baselineProblem({ results: [{ id: "m", outcome: "failed", collectionError: true }], exitCode: 2, tail: undefined })).toContain("could not collect m");
    expect(baselineProblem({ results: [pass("a")], exitCode: 3, tail: undefined })).toContain("exited 3");
  });

  it("accepts a run with failing tests (they are pre-existing) and a clean run", () => {
    expect(baselineProblem({ results: [pass("a"), fail("b")], exitCode: 1, tail: undefined })).toBeUndefined();
    expect(baselineProblem({ results: [pass("a")], exitCode: 0, tail: undefined })).toBeUndefined();
  });
});

describe("isTestFile", () => {
  it("knows the runners' test file names, not fixtures or conftest", () => {
    for (const path of ["tests/test_x.py", "x_test.py", "test/a.test.js", "src/b.spec.ts", "test/c.test.mjs", "test-d.js"]) expect(isTestFile(path)).toBe(true);
    for (const path of ["tests/conftest.py", "tests/data.csv", "src/x.py", "test/helpers.js"]) expect(isTestFile(path)).toBe(false);
  });
});

describe("unearnedLockFiles", () => {
  it("drops a lock file whose manifest did not change, or that is out of scope", () => {
    expect(unearnedLockFiles(["src/a.js", "package-lock.json"], undefined)).toEqual(["package-lock.json"]);
    expect(unearnedLockFiles(["package.json", "package-lock.json"], ["package.json"])).toEqual(["package-lock.json"]);
    expect(unearnedLockFiles(["web/package.json", "package-lock.json"], undefined)).toEqual(["package-lock.json"]);
  });

  it("keeps a lock file changed with its manifest, both in scope", () => {
    expect(unearnedLockFiles(["package.json", "package-lock.json"], ["package.json", "package-lock.json"])).toEqual([]);
    expect(unearnedLockFiles(["pyproject.toml", "uv.lock"], undefined)).toEqual([]);
  });
});
