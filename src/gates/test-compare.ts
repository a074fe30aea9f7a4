import { posix } from "node:path";
import type { TestOutcome, TestResult } from "./junit.js";

/** How a test that should pass stands now. */
export type NotPassing = "failed" | "missing" | "skipped";

export interface TestComparison {
  total: number;
  passed: number;
  /** Passed at the baseline, and now failing, missing or skipped: the work's fault. */
  regressions: { id: string; now: NotPassing }[];
  /** Not at the baseline (new), failing now. */
  newFailures: string[];
  /** Already failing at the baseline: reported, not blamed. */
  preexisting: string[];
}

/**
 * Pure: the current results against the baseline, per test. A test that
 * passed before and is now missing counts as a regression unless it was
 * split into parametrized cases (`id[...]`) that all pass, or the packet's
 * author took it away.
 */
export function compareWithBaseline(
  baseline: readonly TestResult[],
  now: readonly TestResult[],
  exclude: ReadonlySet<string> = new Set(),
  /** Tests the packet's author took away (dropped from a planted file, retired, in a deleted deletable file): missing is no regression, failing still is. */
  mayBeMissing: (id: string) => boolean = () => false,
): TestComparison {
  const before = outcomesById(baseline);
  const current = outcomesById(now);
  const comparison: TestComparison = { total: current.size, passed: 0, regressions: [], newFailures: [], preexisting: [] };
  for (const [id, outcome] of current) {
    if (outcome === "passed") comparison.passed++;
    if (exclude.has(id)) continue;
    const was = before.get(id);
    if (outcome === "failed") {
      if (was === undefined) comparison.newFailures.push(id);
      else if (was === "failed") comparison.preexisting.push(id);
      else if (was === "passed") comparison.regressions.push({ id, now: "failed" });
      else comparison.newFailures.push(id);
    } else if (outcome === "skipped" && was === "passed") {
      comparison.regressions.push({ id, now: "skipped" });
    }
  }
  for (const [id, was] of before) {
    if (was !== "passed" || current.has(id) || exclude.has(id) || ranNoTest(id)) continue;
    if (splitIntoPassingCases(id, current) || mayBeMissing(id)) continue;
    comparison.regressions.push({ id, now: "missing" });
  }
  return comparison;
}

/** A passing entry named by a test file (node:test's word that the file ran no test of its own): no test, so never missing. */
function ranNoTest(id: string): boolean {
  return isTestFile(splitId(id)[1]);
}

function splitIntoPassingCases(id: string, current: ReadonlyMap<string, TestOutcome>): boolean {
  const cases = [...current].filter(([other]) => other.startsWith(`${id}[`));
  return cases.length > 0 && cases.every(([, outcome]) => outcome === "passed");
}

/** Real test cases: not a runner's report that it could not collect a file. */
export function realCases(results: readonly TestResult[]): TestResult[] {
  return results.filter((result) => !result.collectionError);
}

/** A file name that test runners collect as tests (pytest, node:test, vitest, jest conventions). */
export function isTestFile(path: string): boolean {
  const name = posix.basename(path);
  return /^test_.*\.py$|_test\.py$/.test(name) || /(^|[.\-_])(test|spec)\.[cm]?[jt]sx?$/.test(name) || /^test-.*\.[cm]?[jt]sx?$/.test(name);
}

/** Files no runner collects as tests, whatever their directory: package markers and fixture modules. */
const NEVER_TESTS = /(^|\/)(__init__\.py|conftest\.py|setup\.[cm]?[jt]s)$/;
/** Source files a test runner could collect (Python, JavaScript, TypeScript). */
const COLLECTABLE = /\.(py|[cm]?[jt]sx?)$/;

/**
 * The planted files that are tests: every planted source file a runner could collect, whatever its name,
 * unless the packet declares it a support file (`support_files`) or it is a package marker or fixture
 * module. Data files (JSON, CSV, …) are support files by nature. A planted test the runner never collects
 * makes the packet defective, so a test named against the runner's conventions is found, not dropped.
 */
export function plantedTestFiles(planted: readonly string[], supportFiles: readonly string[]): string[] {
  return planted.filter((path) => COLLECTABLE.test(path) && !NEVER_TESTS.test(path) && !supportFiles.includes(path));
}

/** The cases of the planted test files, as recorded right after planting: what must pass after the implementation. */
export interface PlantedCases {
  /** The planted cases that failed (or errored) before any implementation: each must be present and pass after it. */
  cases: string[];
  /** The planted test files (repository paths) that contributed to this gate's report. */
  files: string[];
  /** Tests of the baseline that planting took away: the packet's author removed them, so their absence is never a regression. */
  removed?: string[];
  /**
   * Cases of the planted files that the runner skipped before the work, with its reason ("" when it gave
   * none): this machine does not run them (a macOS-only test on Linux). Still skipped for the same reason
   * after the work, they are not the work's, and are said as not checked here; any other outcome is judged.
   */
  skipped?: Record<string, string>;
  /** Every case of the planted files the runner reported right after planting: each must still be there after the work. */
  seen?: string[];
}

/** One planted file as the runner saw it right after planting (or all of them, for a runner that names no files). */
export interface PlantedCount {
  file: string;
  cases: number;
  /** Cases not in the baseline. */
  fresh: number;
  /** Cases that fail before the work and did not fail at the baseline: the planted cases proper. */
  failing: number;
  /** The file could not be collected or loaded before the work (it imports what the work will add). */
  loadError: boolean;
}

export interface PlantedCheckInput {
  /** Planted test files, repository paths. */
  files: readonly string[];
  /** The surface's directory relative to the repository root ("." for the root). */
  surfaceDir: string;
  baseline: readonly TestResult[];
  now: readonly TestResult[];
  /** `now` is a run of the planted files alone (`{tests}`): every result in it is theirs, and the rest of the suite did not run. */
  only?: boolean;
  /**
   * Under a runner that names no files, a case the baseline had that fails now is taken as the planted files' too
   * (the mutation check: any case the landed tree passed that a mutant fails kills it); by default it is the team's.
   */
  failingAreTheirs?: boolean;
}

/**
 * Pure: the planted cases of one gate's report, right after planting and
 * before any implementation. A planted file may be new or a new version of a
 * test file the tip has, so its cases are judged one by one: a case that fails
 * now and did not fail at the baseline is a planted case (new, or changed by
 * the planting); the file's other cases are ordinary tests, regression-checked
 * as any other. A runner whose report names files (pytest's module
 * classnames, vitest's paths, a `file` attribute) attributes cases per file;
 * one that does not (node:test), run on the whole suite, gets the cases new
 * since the baseline, shared by all planted files (run alone, every case).
 */
export function plantedCases(input: PlantedCheckInput): PlantedCases & { counts: PlantedCount[]; removed: string[]; skipped: Record<string, string>; seen: string[] } {
  const attributable = input.now.some((result) => input.files.some((file) => belongsTo(result, file, input.surfaceDir)) && !isFileLevel(result, input.files, input.surfaceDir));
  const before = outcomesById(input.baseline);
  const files = new Set<string>();
  const cases = new Set<string>();
  const counts = new Map<string, PlantedCount>();
  const skipped: Record<string, string> = {};
  const seen = new Set<string>();
  const countOf = (file: string): PlantedCount => {
    const count = counts.get(file) ?? { file, cases: 0, fresh: 0, failing: 0, loadError: false };
    counts.set(file, count);
    return count;
  };
  const shared = input.files.length === 1 ? (input.files[0] as string) : "the planted files";
  for (const result of input.now) {
    const owners = input.files.filter((file) => belongsTo(result, file, input.surfaceDir));
    const fileLevel = isFileLevel(result, input.files, input.surfaceDir);
    // A passing entry named by the file (node:test) means the file ran no test of its own: it did not run.
    if (fileLevel && result.outcome !== "failed") continue;
    const was = before.get(result.id);
    const failsNow = result.outcome === "failed" && was !== "failed";
    if (owners.length > 0) for (const file of owners) files.add(file);
    else if (input.only && !attributable && !fileLevel)
      for (const file of input.files) files.add(file); // run alone: every case is theirs
    // A runner that names no files, run on the whole suite: only a case new since the baseline can be the planted
    // files'; one the baseline had is the team's, failing now or not (a flaky test right after planting is not planted).
    else if (attributable || fileLevel || (was !== undefined && !(input.failingAreTheirs && failsNow))) continue;
    else for (const file of input.files) files.add(file); // new since the baseline, runner names no files
    const labels = owners.length > 0 ? owners : [shared];
    for (const label of labels) {
      const count = countOf(label);
      if (fileLevel) {
        count.loadError = true;
        continue;
      }
      count.cases++;
      if (was === undefined) count.fresh++;
      if (failsNow) count.failing++;
    }
    if (!fileLevel && failsNow) cases.add(result.id);
    if (!fileLevel) seen.add(result.id);
    // Skipped as not run on this machine; an expected failure (xfail) ran, and is judged after the work like any case.
    if (!fileLevel && result.outcome === "skipped" && !result.expectedFailure) skipped[result.id] = result.reason ?? "";
  }
  const current = outcomesById(input.now);
  // Run alone, a report without file names cannot say which baseline cases the planting took away: none is assumed.
  const removed =
    input.only && !attributable
      ? []
      : [...before.keys()].filter((id) => !current.has(id) && (!attributable || input.files.some((file) => belongsTo({ id, outcome: "passed" }, file, input.surfaceDir))));
  return { cases: [...cases].sort(), files: [...files].sort(), removed: removed.sort(), counts: [...counts.values()], skipped, seen: [...seen].sort() };
}

/** Whether the planted files hold at least one case that fails before the work (a case, or a file that cannot load yet). */
export function hasFailingPlantedCase(counts: readonly PlantedCount[]): boolean {
  return counts.some((count) => count.failing > 0 || count.loadError);
}

/** What a defective planting says: per file, its cases, how many are new, and that none fails; then what to do. */
export function describeNoFailingCase(counts: readonly PlantedCount[]): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  const files = counts.map((count) => `${count.file}: ${plural(count.cases, "case")}, ${count.fresh} new`).join("; ");
  return `${files}, ${counts.length > 1 ? "and none" : "none"} fails before the work: plant a test that fails without the change`;
}

/**
 * Pure: after the implementation, every recorded planted case is present and
 * passes, every planted test file yields cases and no file-level error, and
 * every case of a planted file passes, unless it failed (or was skipped) the
 * same way at the baseline. Returns one finding per problem, naming the test.
 */
export function checkPlanted(input: { planted: PlantedCases; surfaceDir: string; baseline: readonly TestResult[]; now: readonly TestResult[] }): PlantedFindings {
  const { planted, surfaceDir, now } = input;
  const outcomes = outcomesById(now);
  const findings: { id: string; message: string }[] = [];
  const unchecked: { id: string; reason: string }[] = [];
  // Skipped before the work and now, for the same reason: this machine does not run it (never a case that failed before the work).
  const skippedHere = (result: TestResult): boolean =>
    result.outcome === "skipped" && outcomes.get(result.id) === "skipped" && planted.skipped?.[result.id] === (result.reason ?? "") && !planted.cases.includes(result.id);
  const covered = new Set(planted.cases);
  for (const id of planted.cases) {
    const outcome = outcomes.get(id);
    if (outcome === "passed") continue;
    findings.push({ id, message: outcome === undefined ? "planted test is missing: it did not run" : `planted test ${outcome === "failed" ? "fails" : "was skipped"}` });
  }
  const before = outcomesById(input.baseline);
  for (const file of planted.files) {
    const fileLevel = now.filter((result) => isFileLevel(result, [file], surfaceDir));
    if (fileLevel.length > 0) {
      // node:test names a file by its path when it failed to load, or when it ran no test of its own (it exited early).
      const failed = fileLevel.some((result) => result.outcome === "failed");
      findings.push({ id: file, message: failed ? "planted test file could not be collected or loaded" : "planted test file ran no test of its own: something ended it early" });
      for (const result of fileLevel) covered.add(result.id);
      continue;
    }
    const owned = now.filter((result) => belongsTo(result, file, surfaceDir));
    // A runner that names no files: the file's cases are those new since the baseline (never another file's own entry).
    const cases = owned.length > 0 ? owned : now.filter((result) => !before.has(result.id) && !isFileLevel(result, planted.files, surfaceDir));
    const here = cases.filter(skippedHere);
    for (const result of here) {
      covered.add(result.id);
      unchecked.push({ id: result.id, reason: result.reason ?? "" });
    }
    if (cases.length === 0) findings.push({ id: file, message: "planted test file yields no test case now: it did not run" });
    else if (here.length < cases.length && !cases.some((result) => result.outcome === "passed")) {
      findings.push({ id: file, message: "no test of this planted file passes" });
      for (const result of cases) covered.add(result.id);
    }
    // Every case of a planted file passes after the work, however its cases came to be known (a file that could not be collected
    // before the work names none): only a case that stood the same way on the baseline's own tree is not the work's.
    for (const result of cases) {
      if (covered.has(result.id)) continue;
      covered.add(result.id);
      const outcome = outcomes.get(result.id);
      if (outcome === "passed" || (outcome === before.get(result.id) && !result.expectedFailure)) continue;
      findings.push({ id: result.id, message: `case of planted file ${file} ${outcome === "failed" ? "fails" : result.expectedFailure ? "xfails: it ran and failed as marked" : "was skipped"}` });
    }
  }
  // A case the planted files yielded before the work is there after it (the work cannot make a planted case vanish).
  for (const id of planted.seen ?? []) {
    if (covered.has(id) || outcomes.has(id) || splitIntoPassingCases(id, outcomes)) continue;
    covered.add(id);
    findings.push({ id, message: "case of a planted file ran before the work and is missing now" });
  }
  return { findings, covered, unchecked };
}

export interface PlantedFindings {
  findings: { id: string; message: string }[];
  /** Cases of planted files skipped here before the work and after it, for the same reason: not checked on this machine. */
  unchecked: { id: string; reason: string }[];
  /** The ids judged here as the planted files' cases: not judged again as new tests. */
  covered: Set<string>;
}

/**
 * Whether a test id is named by one of `specs`, as a packet writes them: `path/to/test_file.py::name` (one
 * test, parametrized cases included) or `path/to/test_file.py` (every test of the file).
 */
export function namedBy(id: string, specs: readonly string[], surfaceDir: string): boolean {
  const [classname, name] = splitId(id);
  return specs.some((spec) => {
    const [file = "", ...inside] = spec.split("::");
    const test = inside.at(-1);
    const within = inside.slice(0, -1); // a class, for pytest's `file.py::TestClass::test_name`
    if (test !== undefined && name !== test && !name.startsWith(`${test}[`)) return false;
    if (within.length > 0 && !classname.endsWith(`.${within.join(".")}`)) return false;
    return belongsTo({ id, outcome: "passed" }, file, surfaceDir);
  });
}

/** Whether any of `results` is a case of `file` (a repository path), by the report's own naming. */
export function hasCasesOf(results: readonly TestResult[], file: string, surfaceDir: string): boolean {
  return results.some((result) => belongsTo(result, file, surfaceDir) && !isFileLevel(result, [file], surfaceDir));
}

/** Pure: the results the report ties to one of `files` (repository paths). */
export function casesOfFiles(results: readonly TestResult[], files: readonly string[], surfaceDir: string): TestResult[] {
  return results.filter((result) => files.some((file) => belongsTo(result, file, surfaceDir)));
}

/** Whether a result's report ties it to `file` (a repository path). */
function belongsTo(result: TestResult, file: string, surfaceDir: string): boolean {
  return pathForms(file, surfaceDir).some((form) => {
    const stem = form.replace(/\.[^./]+$/, "");
    const dotted = stem.replaceAll("/", ".");
    const [classname, name] = splitId(result.id);
    return (
      result.file === form ||
      result.file?.endsWith(`/${form}`) === true ||
      classname === form ||
      classname === stem ||
      classname === dotted ||
      classname.startsWith(`${dotted}.`) ||
      name === form ||
      (classname === "" && (name === dotted || name === form))
    );
  });
}

/** A report entry about the whole file (it could not be collected or loaded), not a test case. */
/** Whether a result stands for a whole file of `files` (a collection or load error, a file-level entry), not a case in it. */
export function isFileLevel(result: TestResult, files: readonly string[], surfaceDir: string): boolean {
  if (result.collectionError) return files.some((file) => belongsTo(result, file, surfaceDir));
  const [, name] = splitId(result.id);
  return files.some((file) => pathForms(file, surfaceDir).includes(name));
}

function pathForms(file: string, surfaceDir: string): string[] {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  return prefix && file.startsWith(prefix) ? [file, file.slice(prefix.length)] : [file];
}

function splitId(id: string): [string, string] {
  const at = id.indexOf("::");
  return at < 0 ? ["", id] : [id.slice(0, at), id.slice(at + 2)];
}

/** A test id reported several times (parametrized, retried) counts as failed if any report failed. */
export function outcomesById(results: readonly TestResult[]): Map<string, TestOutcome> {
  const map = new Map<string, TestOutcome>();
  for (const result of results) {
    const previous = map.get(result.id);
    if (previous === "failed") continue;
    if (result.outcome === "failed" || previous === undefined || previous === "skipped") map.set(result.id, result.outcome);
  }
  return map;
}
