import { XMLParser, XMLValidator } from "fast-xml-parser";

export type TestOutcome = "passed" | "failed" | "skipped";

export interface TestResult {
  /** `classname::name`, or the name alone when there is no classname. */
  id: string;
  outcome: TestOutcome;
}

export type JunitParse =
  | { ok: true; results: TestResult[] }
  | { ok: false; reason: "junit-unparseable"; detail: string };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  isArray: (name) => name === "testsuite" || name === "testcase",
  processEntities: true,
});

/** Pure: per-test outcomes from JUnit XML as pytest, vitest, jest-junit and node:test write it. */
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
  return { ok: true, results };
}

function collect(node: unknown, results: TestResult[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, results);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === "testcase") {
      for (const testcase of Array.isArray(value) ? value : [value]) results.push(toResult(testcase));
    } else if (!key.startsWith("@")) {
      collect(value, results);
    }
  }
}

function toResult(testcase: unknown): TestResult {
  const record = (typeof testcase === "object" && testcase !== null ? testcase : {}) as Record<string, unknown>;
  const name = String(record["@name"] ?? "?");
  const classname = record["@classname"];
  const id = typeof classname === "string" && classname !== "" ? `${classname}::${name}` : name;
  const failed = "failure" in record || "error" in record || "@failure" in record;
  const skipped = "skipped" in record;
  return { id, outcome: failed ? "failed" : skipped ? "skipped" : "passed" };
}

export interface TestComparison {
  total: number;
  passed: number;
  /** Passed at baseline, fail now: the work's fault. */
  regressions: string[];
  /** Not at baseline (planted or new), failing now. */
  newFailures: string[];
  /** Already failing at baseline: reported, not blamed. */
  preexisting: string[];
}

/** Pure: the current results against the baseline, per test. */
export function compareWithBaseline(baseline: readonly TestResult[], now: readonly TestResult[]): TestComparison {
  const before = outcomesById(baseline);
  const comparison: TestComparison = { total: now.length, passed: 0, regressions: [], newFailures: [], preexisting: [] };
  for (const [id, outcome] of outcomesById(now)) {
    if (outcome === "passed") comparison.passed++;
    if (outcome !== "failed") continue;
    const was = before.get(id);
    if (was === undefined) comparison.newFailures.push(id);
    else if (was === "failed") comparison.preexisting.push(id);
    else comparison.regressions.push(id);
  }
  return comparison;
}

/** Tests not in the baseline that pass: after planting, before implementing, these prove a defective packet. */
export function newPassing(baseline: readonly TestResult[], now: readonly TestResult[]): string[] {
  const before = outcomesById(baseline);
  return [...outcomesById(now)].filter(([id, outcome]) => !before.has(id) && outcome === "passed").map(([id]) => id);
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
