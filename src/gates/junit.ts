import { XMLParser, XMLValidator } from "fast-xml-parser";

export type TestOutcome = "passed" | "failed" | "skipped";

export interface TestResult {
  /** `classname::name`, or the name alone when there is no classname. */
  id: string;
  outcome: TestOutcome;
  /** The test's file, when the report names one (a `file` attribute). */
  file?: string;
  /** Not a test: the runner could not collect a file (pytest's "collection failure"). */
  collectionError?: true;
  /** A skipped case: the runner's reason (the `message` of its `<skipped>`), when it gives one. */
  reason?: string;
  /** A skipped case that ran and failed as marked (pytest's xfail, node:test's failing todo): it ran here, so it is no "not run on this machine". */
  expectedFailure?: true;
}

export type JunitParse = { ok: true; results: TestResult[] } | { ok: false; reason: "junit-unparseable"; detail: string };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  isArray: (name) => name === "testsuite" || name === "testcase",
  processEntities: true,
});

const JEST_SUITE_ERROR = "Test suite failed to run::";

/** Pure: per-test outcomes from JUnit XML as pytest, vitest, jest-junit, node:test and mocha's xunit reporter write it. */
export function parseJunit(xml: string): JunitParse {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) return { ok: false, reason: "junit-unparseable", detail: `${valid.err.msg} (line ${valid.err.line})` };
  let document: unknown;
  try {
    document = parser.parse(xml);
  } catch (error) {
    return { ok: false, reason: "junit-unparseable", detail: error instanceof Error ? error.message : String(error) };
  }
  const results: TestResult[] = [];
  collect(document, results);
  // jest-junit writes a file that failed to run twice (its <error>, then a <failure>): one failing entry is the file.
  const suiteErrors = new Set<string>();
  const once = results.filter((result) => !result.id.startsWith(JEST_SUITE_ERROR) || (!suiteErrors.has(result.id) && Boolean(suiteErrors.add(result.id))));
  return { ok: true, results: once };
}

/** The suite mocha's built-in xunit reporter writes every case into. */
const MOCHA_SUITE = "Mocha Tests";
/** The phony test mocha fails for an error outside any test: in parallel mode, a file that could not load. */
const MOCHA_UNLOADABLE = "Uncaught error outside test suite";

function collect(node: unknown, results: TestResult[], mocha = false): void {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, results, mocha);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === "testcase") {
      for (const testcase of Array.isArray(value) ? value : [value]) results.push(toResult(testcase, mocha));
    } else if (key === "testsuite") {
      for (const suite of Array.isArray(value) ? value : [value]) collect(suite, results, mocha || (suite as Record<string, unknown> | null)?.["@name"] === MOCHA_SUITE);
    } else if (!key.startsWith("@")) {
      collect(value, results, mocha);
    }
  }
}

function toResult(testcase: unknown, mocha: boolean): TestResult {
  const record = (typeof testcase === "object" && testcase !== null ? testcase : {}) as Record<string, unknown>;
  const name = String(record["@name"] ?? "?");
  const classname = record["@classname"];
  const file = record["@file"];
  // jest-junit's defaults write "{classname} {title}" (the describe blocks and the test) into both attributes and the
  // file only into `file`: two files' cases of one name would share an id, and one could stand for the other.
  const jestDefault = classname === name && typeof file === "string" && file !== "";
  // mocha's xunit writes the describe blocks as the classname and the test's own title as the name: the file and
  // the full title (mocha's own way of naming a test) are its id, so two files' tests of one title stay apart.
  const mochaFile = mocha && typeof file === "string" && file !== "";
  const fullTitle = typeof classname === "string" && classname !== "" ? `${classname} ${name}` : name;
  // A file mocha could not load (parallel mode) is its phony "Uncaught error outside test suite": named by its path, as node:test names one.
  const mochaId = fullTitle === MOCHA_UNLOADABLE ? String(file) : `${file}::${fullTitle}`;
  const id = jestDefault ? `${file}::${name.trim()}` : mochaFile ? mochaId : typeof classname === "string" && classname !== "" ? `${classname}::${name}` : name;
  const skip = record.skipped;
  const skipType = typeof skip === "object" && skip !== null ? (skip as Record<string, unknown>)["@type"] : undefined;
  // node:test reports a todo test that fails with both <skipped type="todo"> and <failure>; it does not fail the run.
  const todo = skipType === "todo";
  const failed = !todo && ("failure" in record || "error" in record || "@failure" in record);
  const skipped = "skipped" in record;
  const error = record.error;
  const collectionError = typeof error === "object" && error !== null && (error as Record<string, unknown>)["@message"] === "collection failure";
  const skipRecord = !failed && typeof skip === "object" && skip !== null ? (skip as Record<string, unknown>) : undefined;
  const reason = skipRecord?.["@message"];
  const expectedFailure = skipType === "pytest.xfail" || (todo && ("failure" in record || "@failure" in record));
  return {
    id,
    outcome: failed ? "failed" : skipped ? "skipped" : "passed",
    ...(typeof file === "string" && file !== "" ? { file } : {}),
    ...(collectionError ? { collectionError: true as const } : {}),
    ...(typeof reason === "string" && reason !== "" ? { reason } : {}),
    ...(expectedFailure ? { expectedFailure: true as const } : {}),
  };
}

/**
 * Pure: test ids and files made repository-relative. Runners name files by
 * absolute path (node:test names a file that failed to load by it), so a
 * baseline measured in one worktree would not fit another.
 */
export function normalizeResults(results: readonly TestResult[], worktree: string): TestResult[] {
  const prefix = worktree.endsWith("/") ? worktree : `${worktree}/`;
  const strip = (text: string): string => text.replaceAll(`file://${prefix}`, "").replaceAll(prefix, "");
  return results.map((result) => ({ ...result, id: strip(result.id), ...(result.file ? { file: strip(result.file) } : {}), ...(result.reason ? { reason: strip(result.reason) } : {}) }));
}
