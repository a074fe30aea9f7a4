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
 * split into parametrized cases (`id[...]`) that all pass.
 */
export function compareWithBaseline(baseline: readonly TestResult[], now: readonly TestResult[], exclude: ReadonlySet<string> = new Set()): TestComparison {
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
    if (was !== "passed" || current.has(id) || exclude.has(id)) continue;
    if (splitIntoPassingCases(id, current)) continue;
    comparison.regressions.push({ id, now: "missing" });
  }
  return comparison;
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

/** The cases of the planted test files, as recorded right after planting: what must pass after the implementation. */
export interface PlantedCases {
  /** Test ids (not file-level errors) seen in this gate's report for the planted test files. */
  cases: string[];
  /** The planted test files (repository paths) that contributed to this gate's report. */
  files: string[];
}

export interface PlantedCheckInput {
  /** Planted test files, repository paths. */
  files: readonly string[];
  /** The surface's directory relative to the repository root ("." for the root). */
  surfaceDir: string;
  baseline: readonly TestResult[];
  now: readonly TestResult[];
}

/**
 * Pure: which cases of one gate's report belong to the planted test files
 * (before any implementation), and which of those already pass. A runner
 * whose report names files (pytest's module classnames, vitest's paths, a
 * `file` attribute) attributes cases per file; one that does not (node:test)
 * gets the cases that are new since the baseline, shared by all planted files.
 */
export function plantedCases(input: PlantedCheckInput): PlantedCases & { passing: string[] } {
  const attributable = input.now.some((result) => input.files.some((file) => belongsTo(result, file, input.surfaceDir)) && !isFileLevel(result, input.files, input.surfaceDir));
  const before = outcomesById(input.baseline);
  const files = new Set<string>();
  const cases = new Set<string>();
  for (const result of input.now) {
    const owners = input.files.filter((file) => belongsTo(result, file, input.surfaceDir));
    const fileLevel = isFileLevel(result, input.files, input.surfaceDir);
    // A passing entry named by the file (node:test) means the file ran no test of its own: it did not run.
    if (fileLevel && result.outcome !== "failed") continue;
    if (owners.length > 0) for (const file of owners) files.add(file);
    else if (attributable || fileLevel || before.has(result.id)) continue;
    else for (const file of input.files) files.add(file); // new since the baseline, runner names no files
    if (!fileLevel) cases.add(result.id);
  }
  const outcomes = outcomesById(input.now);
  const passing = [...cases].filter((id) => outcomes.get(id) === "passed");
  return { cases: [...cases].sort(), files: [...files].sort(), passing };
}

/**
 * Pure: after the implementation, every recorded planted case is present and
 * passes, and every planted test file still yields passing cases and no
 * file-level error. Returns one finding per problem, naming the test.
 */
export function checkPlanted(input: { planted: PlantedCases; surfaceDir: string; baseline: readonly TestResult[]; now: readonly TestResult[] }): PlantedFindings {
  const { planted, surfaceDir, now } = input;
  const outcomes = outcomesById(now);
  const findings: { id: string; message: string }[] = [];
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
    for (const result of cases) covered.add(result.id);
    if (cases.length === 0) findings.push({ id: file, message: "planted test file yields no test case now: it did not run" });
    else if (!cases.some((result) => result.outcome === "passed")) findings.push({ id: file, message: "no test of this planted file passes" });
  }
  return { findings, covered };
}

export interface PlantedFindings {
  findings: { id: string; message: string }[];
  /** The ids judged here as the planted files' cases: not judged again as new tests. */
  covered: Set<string>;
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
function isFileLevel(result: TestResult, files: readonly string[], surfaceDir: string): boolean {
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
function outcomesById(results: readonly TestResult[]): Map<string, TestOutcome> {
  const map = new Map<string, TestOutcome>();
  for (const result of results) {
    const previous = map.get(result.id);
    if (previous === "failed") continue;
    if (result.outcome === "failed" || previous === undefined || previous === "skipped") map.set(result.id, result.outcome);
  }
  return map;
}
