import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/gates/command.js";
import type { TestResult } from "../../src/gates/junit.js";
import { unearnedLockFiles } from "../../src/gates/lock-files.js";
import { checkPlanted, compareWithBaseline, describeNoFailingCase, hasFailingPlantedCase, isTestFile, namedBy, plantedCases, plantedTestFiles } from "../../src/gates/test-compare.js";
import { baselineProblem } from "../../src/loop/baseline.js";

const pass = (id: string, extra: Partial<TestResult> = {}): TestResult => ({ id, outcome: "passed", ...extra });
const fail = (id: string, extra: Partial<TestResult> = {}): TestResult => ({ id, outcome: "failed", ...extra });
const skip = (id: string, reason?: string): TestResult => ({ id, outcome: "skipped", ...(reason ? { reason } : {}) });

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

  it("does not miss a passing entry named by a test file (node:test: the file ran no test) once the file's tests appear", () => {
    const before = [pass("test::adds"), pass("test::test/empty.test.js")];
    expect(compareWithBaseline(before, [pass("test::adds"), pass("test::now there")]).regressions).toEqual([]);
    expect(compareWithBaseline([pass("test::adds"), pass("test::gone")], [pass("test::adds")]).regressions).toEqual([{ id: "test::gone", now: "missing" }]);
  });

  it("counts a test reported several times as failed if any report failed", () => {
    expect(compareWithBaseline(baseline, [...baseline.slice(1), pass("a"), fail("a")]).regressions).toEqual([{ id: "a", now: "failed" }]);
  });
});

describe("plantedCases (right after planting)", () => {
  const baseline = [pass("tests.test_calc::test_add")];
  const count = (file: string, cases: number, fresh: number, failing: number, loadError = false) => ({ file, cases, fresh, failing, loadError });

  it("attributes pytest cases to their module; only the failing ones are planted cases, a new one that passes is an ordinary test", () => {
    const now = [...baseline, fail("tests.test_double::test_double"), pass("tests.test_double::test_zero")];
    expect(plantedCases({ files: ["tests/test_double.py"], surfaceDir: ".", baseline, now })).toEqual({
      cases: ["tests.test_double::test_double"],
      files: ["tests/test_double.py"],
      removed: [],
      counts: [count("tests/test_double.py", 2, 2, 1)],
      skipped: {},
      seen: ["tests.test_double::test_double", "tests.test_double::test_zero"],
    });
  });

  it("judges a new version of an existing file per case: the one new failing case among passing ones, and the ones it dropped", () => {
    const before = [pass("tests.test_calc::test_add"), pass("tests.test_calc::test_sub"), pass("tests.test_calc::test_mul"), pass("tests.test_other::test_x")];
    const now = [pass("tests.test_calc::test_add"), pass("tests.test_calc::test_mul"), fail("tests.test_calc::test_div"), pass("tests.test_other::test_x")];
    expect(plantedCases({ files: ["tests/test_calc.py"], surfaceDir: ".", baseline: before, now })).toEqual({
      cases: ["tests.test_calc::test_div"],
      files: ["tests/test_calc.py"],
      removed: ["tests.test_calc::test_sub"],
      counts: [count("tests/test_calc.py", 3, 1, 1)],
      skipped: {},
      seen: ["tests.test_calc::test_add", "tests.test_calc::test_div", "tests.test_calc::test_mul"],
    });
  });

  it("takes an existing case that passed at the baseline and fails with the planted version as changed: a planted case", () => {
    const now = [fail("tests.test_calc::test_add")];
    expect(plantedCases({ files: ["tests/test_calc.py"], surfaceDir: ".", baseline, now }).cases).toEqual(["tests.test_calc::test_add"]);
    expect(hasFailingPlantedCase(plantedCases({ files: ["tests/test_calc.py"], surfaceDir: ".", baseline, now: baseline }).counts)).toBe(false);
  });

  it("counts a collection failure of the planted module as failing before the work (no case to require yet)", () => {
    const now = [{ id: "tests.test_double", outcome: "failed" as const, collectionError: true as const }];
    const found = plantedCases({ files: ["tests/test_double.py"], surfaceDir: ".", baseline, now });
    expect(found).toMatchObject({ cases: [], files: ["tests/test_double.py"], counts: [count("tests/test_double.py", 0, 0, 0, true)] });
    expect(hasFailingPlantedCase(found.counts)).toBe(true);
  });

  it("finds nothing for a planted file the runner never collected", () => {
    expect(plantedCases({ files: ["other/test_double.py"], surfaceDir: ".", baseline, now: baseline })).toEqual({ cases: [], files: [], removed: [], counts: [], skipped: {}, seen: [] });
  });

  it("with a runner that names no files (node:test), takes the cases new since the baseline and a load failure named by path; a team's test failing now is not planted", () => {
    const nodeBaseline = [pass("test::adds")];
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [...nodeBaseline, fail("test::doubles")] })).toEqual({
      cases: ["test::doubles"],
      files: ["test/double.test.js"],
      removed: [],
      counts: [count("test/double.test.js", 1, 1, 1)],
      skipped: {},
      seen: ["test::doubles"],
    });
    // A flaky team's test that fails right after planting is the team's, not a planted case (issue 55 §3).
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [fail("test::adds"), fail("test::doubles")] }).cases).toEqual(["test::doubles"]);
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [...nodeBaseline, fail("test::test/double.test.js")] })).toMatchObject({
      cases: [],
      files: ["test/double.test.js"],
      counts: [count("test/double.test.js", 0, 0, 0, true)],
    });
  });

  it("run alone (node:test, no file names): every case is the planted file's, and none of the suite's other cases is taken as removed", () => {
    const nodeBaseline = [pass("test::adds"), pass("test::subtracts")];
    const alone = plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [pass("test::adds"), fail("test::doubles")], only: true });
    expect(alone).toEqual({
      cases: ["test::doubles"],
      files: ["test/double.test.js"],
      removed: [],
      counts: [count("test/double.test.js", 2, 1, 1)],
      skipped: {},
      seen: ["test::adds", "test::doubles"],
    });
    // The same report from a whole-suite run would say the planting took test::subtracts away.
    expect(plantedCases({ files: ["test/double.test.js"], surfaceDir: ".", baseline: nodeBaseline, now: [pass("test::adds"), fail("test::doubles")] }).removed).toEqual(["test::subtracts"]);
  });

  it("matches paths relative to the surface directory", () => {
    const now = [fail("tests.test_double::test_double")];
    expect(plantedCases({ files: ["api/tests/test_double.py"], surfaceDir: "api", baseline: [], now }).files).toEqual(["api/tests/test_double.py"]);
  });

  it("says, for a planting with no failing case, each file's cases and new ones, and what to do", () => {
    expect(describeNoFailingCase([count("tests/test_more.py", 576, 1, 0)])).toBe("tests/test_more.py: 576 cases, 1 new, none fails before the work: plant a test that fails without the change");
    expect(describeNoFailingCase([count("a/test_a.py", 1, 0, 0), count("b/test_b.py", 2, 2, 0)])).toBe(
      "a/test_a.py: 1 case, 0 new; b/test_b.py: 2 cases, 2 new, and none fails before the work: plant a test that fails without the change",
    );
  });
});

describe("tests the packet takes away", () => {
  it("excuses a missing test named by file and name, by class, or by its whole file; never a failing one", () => {
    const baseline = [pass("tests.test_x::test_old"), pass("tests.test_x.TestY::test_m"), pass("tests.test_gone::test_a"), pass("tests.test_x::test_kept")];
    const taken = ["tests/test_x.py::test_old", "tests/test_x.py::TestY::test_m", "tests/test_gone.py"];
    const gone = (id: string) => namedBy(id, taken, ".");
    expect(compareWithBaseline(baseline, [pass("tests.test_x::test_kept")], new Set(), gone).regressions).toEqual([]);
    expect(compareWithBaseline(baseline, [fail("tests.test_x::test_old"), pass("tests.test_x::test_kept")], new Set(), gone).regressions).toEqual([{ id: "tests.test_x::test_old", now: "failed" }]);
    expect(compareWithBaseline(baseline, [pass("tests.test_x::test_old")], new Set(), gone).regressions).toEqual([{ id: "tests.test_x::test_kept", now: "missing" }]);
    expect(namedBy("tests.test_x.TestZ::test_m", taken, ".")).toBe(false);
  });
});

describe("plantedTestFiles", () => {
  it("takes every collectable planted source file as a test, whatever its name, except declared support files and package markers", () => {
    expect(
      plantedTestFiles(["tests/check_x.py", "tests/test_y.py", "tests/helpers.py", "tests/__init__.py", "tests/conftest.py", "tests/fixtures/a.json", "src/x.test.ts"], ["tests/helpers.py"]),
    ).toEqual(["tests/check_x.py", "tests/test_y.py", "src/x.test.ts"]);
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

  it("fails every failing or skipped case of a planted file whose cases were not known before the work, though another passes", () => {
    const fileOnly = { cases: [], files: ["tests/test_double.py"] };
    const now = [...baseline, pass("tests.test_double::test_double"), fail("tests.test_double::test_negative"), skip("tests.test_double::test_zero")];
    expect(checkPlanted({ planted: fileOnly, surfaceDir: ".", baseline, now }).findings).toEqual([
      { id: "tests.test_double::test_negative", message: "case of planted file tests/test_double.py fails" },
      { id: "tests.test_double::test_zero", message: "case of planted file tests/test_double.py was skipped" },
    ]);
  });

  it("fails a case the planted file yielded before the work and that is gone after it, and an expected failure (xfail)", () => {
    const now = [
      ...baseline,
      fail("tests.test_double::test_double"),
      pass("tests.test_double::test_zero"),
      { id: "tests.test_double::test_known", outcome: "skipped" as const, reason: "known", expectedFailure: true as const },
    ];
    const planted = plantedCases({ files: ["tests/test_double.py"], surfaceDir: ".", baseline, now });
    expect(planted.skipped).toEqual({}); // an xfail ran: it is no "not run on this machine"
    const judgedWith = (rest: TestResult[]) => checkPlanted({ planted, surfaceDir: ".", baseline, now: [...baseline, pass("tests.test_double::test_double"), ...rest] }).findings;
    expect(judgedWith([pass("tests.test_double::test_zero"), pass("tests.test_double::test_known")])).toEqual([]);
    expect(judgedWith([pass("tests.test_double::test_known")])).toEqual([{ id: "tests.test_double::test_zero", message: "case of a planted file ran before the work and is missing now" }]);
    expect(judgedWith([pass("tests.test_double::test_zero"), now[now.length - 1] as TestResult])).toEqual([
      { id: "tests.test_double::test_known", message: "case of planted file tests/test_double.py xfails: it ran and failed as marked" },
    ]);
    // Split into parametrized cases that all pass, it is still there.
    expect(judgedWith([pass("tests.test_double::test_zero[0]"), pass("tests.test_double::test_zero[1]"), pass("tests.test_double::test_known")])).toEqual([]);
  });

  it("leaves out a planted case this machine skipped before the work and still skips for the same reason; judges any other outcome", () => {
    const MAC = "This test only runs on macOS";
    // As recorded right after planting: the new file's cases skipped here, another planted file's case failing.
    const planted = plantedCases({
      files: ["tests/test_double.py", "tests/test_mac.py"],
      surfaceDir: ".",
      baseline,
      now: [...baseline, fail("tests.test_double::test_double"), skip("tests.test_mac::test_flags", MAC), skip("tests.test_mac::test_arch", MAC)],
    });
    expect(planted.skipped).toEqual({ "tests.test_mac::test_flags": MAC, "tests.test_mac::test_arch": MAC });
    const judged = (mac: TestResult[]) => checkPlanted({ planted, surfaceDir: ".", baseline, now: [...baseline, pass("tests.test_double::test_double"), ...mac] });
    const quiet = judged([skip("tests.test_mac::test_flags", MAC), skip("tests.test_mac::test_arch", MAC)]);
    expect(quiet.findings).toEqual([]);
    expect(quiet.unchecked).toEqual([
      { id: "tests.test_mac::test_flags", reason: MAC },
      { id: "tests.test_mac::test_arch", reason: MAC },
    ]);
    expect(judged([pass("tests.test_mac::test_flags"), skip("tests.test_mac::test_arch", MAC)]).findings).toEqual([]);
    // Skipped for another reason now (the work made its import fail), or failing: the work's.
    const noneRuns = [{ id: "tests/test_mac.py", message: "no test of this planted file passes" }];
    expect(judged([skip("tests.test_mac::test_flags", "could not import 'gyp.xcode'"), skip("tests.test_mac::test_arch", MAC)]).findings).toEqual(noneRuns);
    expect(judged([fail("tests.test_mac::test_flags"), skip("tests.test_mac::test_arch", MAC)]).findings).toEqual(noneRuns);
    expect(judged([fail("tests.test_mac::test_flags"), pass("tests.test_mac::test_arch")]).findings).toEqual([
      { id: "tests.test_mac::test_flags", message: "case of planted file tests/test_mac.py fails" },
    ]);
    // A planted case that failed before the work is never excused by a skip after it.
    const skippedAfter = checkPlanted({
      planted,
      surfaceDir: ".",
      baseline,
      now: [...baseline, skip("tests.test_double::test_double", MAC), skip("tests.test_mac::test_flags", MAC), skip("tests.test_mac::test_arch", MAC)],
    });
    expect(skippedAfter.findings).toContainEqual({ id: "tests.test_double::test_double", message: "planted test was skipped" });
  });

  it("does not blame a case of a planted file that failed, or was skipped, the same way on the baseline's tree", () => {
    const changed = { cases: ["tests.test_calc::test_new"], files: ["tests/test_calc.py"] };
    const before = [pass("tests.test_calc::test_add"), fail("tests.test_calc::test_known_bug"), skip("tests.test_calc::test_windows")];
    const now = [pass("tests.test_calc::test_add"), fail("tests.test_calc::test_known_bug"), skip("tests.test_calc::test_windows"), pass("tests.test_calc::test_new")];
    expect(checkPlanted({ planted: changed, surfaceDir: ".", baseline: before, now }).findings).toEqual([]);
    const broke = [pass("tests.test_calc::test_add"), fail("tests.test_calc::test_known_bug"), fail("tests.test_calc::test_windows"), pass("tests.test_calc::test_new")];
    expect(checkPlanted({ planted: changed, surfaceDir: ".", baseline: before, now: broke }).findings).toEqual([
      { id: "tests.test_calc::test_windows", message: "case of planted file tests/test_calc.py fails" },
    ]);
  });

  it("fails a new case that fails, for a runner that names no files (node:test)", () => {
    const nodeFile = { cases: [], files: ["test/double.test.js"] };
    const now = [pass("test::adds"), pass("test::doubles"), fail("test::doubles negatives")];
    expect(checkPlanted({ planted: nodeFile, surfaceDir: ".", baseline: [pass("test::adds")], now }).findings).toEqual([
      { id: "test::doubles negatives", message: "case of planted file test/double.test.js fails" },
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
