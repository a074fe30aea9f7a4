import type { TestOutcome, TestResult } from "./junit.js";
import { outcomesById } from "./test-compare.js";

/**
 * Telling a flaky test from a regression. A test that passed at the baseline and fails in the candidate is
 * run again, alone, in the candidate and on the untouched tip (`[tests] reruns`). Every outcome seen is
 * an observation: the candidate's are its first run and its reruns; the tip's are the baseline and the
 * reruns there. A test that flips on the untouched tip is flaky whatever the work did, and is left out of
 * that packet's verdict; one that passed every time at the tip and failed at least once in the candidate
 * stays a regression (a change that makes a test fail now and then is not excused: it flips only in the
 * candidate).
 *
 *   tip: same every run ── candidate: fails every run ─────▶ regression
 *                      └── candidate: passes on a rerun ───▶ regression ("fails k of n runs here")
 *   tip: flips ────────────────────────────────────────────▶ flaky (left out, recorded, named)
 *
 * Planted cases are never excused: one whose runs disagree is a defective packet.
 */

/** An outcome in a rerun: as reported, or `missing` when the run did not report the test at all. */
export type Observed = TestOutcome | "missing";

export interface RerunObservation {
  id: string;
  /** The candidate's outcomes: its first run, then each rerun. */
  candidate: readonly Observed[];
  /** The tip's outcomes: the baseline, then each rerun there (the baseline alone when the tip could not be rerun). */
  tip: readonly Observed[];
}

export interface FlakyTest {
  id: string;
  tip: Observed[];
  candidate: Observed[];
}

export interface RerunVerdict {
  /** Flipped on the untouched tip: left out of the verdict. */
  flaky: FlakyTest[];
  /** Still regressions, with what the reruns saw (for the finding's message). */
  regressions: { id: string; message: string }[];
}

/** The most tests one gate reruns: beyond them a change broke much more than a flaky test, and they stay regressions. */
export const MAX_RERUN_TESTS = 20;

/** Pure: flaky or regression, per test, from what its reruns saw. */
export function judgeReruns(observations: readonly RerunObservation[]): RerunVerdict {
  const verdict: RerunVerdict = { flaky: [], regressions: [] };
  for (const observed of observations) {
    if (flips(observed.tip)) {
      verdict.flaky.push({ id: observed.id, tip: [...observed.tip], candidate: [...observed.candidate] });
      continue;
    }
    const failed = observed.candidate.filter((outcome) => outcome !== "passed").length;
    const total = observed.candidate.length;
    const tipRuns = observed.tip.length;
    const atTip = tipRuns > 1 ? `passed all ${tipRuns} runs at the tip` : "passed at the baseline (the tip was not run again)";
    const message =
      failed === total
        ? `passed at the baseline and fails now: failed ${failed} of ${total} run(s) here, ${atTip}`
        : `fails ${failed} of ${total} runs here and ${atTip}: the change makes it fail (now and then)`;
    verdict.regressions.push({ id: observed.id, message });
  }
  return verdict;
}

/** Whether a series of outcomes holds both a pass and something else. */
export function flips(outcomes: readonly Observed[]): boolean {
  return outcomes.includes("passed") && outcomes.some((outcome) => outcome !== "passed");
}

/** What a person reads about a flaky test: "flaky at the tip: ID, 2 of 3 runs failed". */
export function describeFlaky(test: Pick<FlakyTest, "id" | "tip">): string {
  return flakyLine(test.id, test.tip.filter((outcome) => outcome !== "passed").length, test.tip.length);
}

export function flakyLine(id: string, failed: number, runs: number): string {
  return `flaky at the tip: ${id}, ${failed} of ${runs} runs failed`;
}

export interface PlantedFlip {
  id: string;
  passed: number;
  runs: number;
}

/**
 * Pure: the planted cases whose runs disagree. `suite` is the whole suite's outcome of each case, `alone`
 * the runs of the planted files on their own. A case that passed in the suite and failed in every run on
 * its own is not a flip: something collected beside it steers it (said by the planted-only check).
 */
export function plantedFlips(cases: readonly string[], suite: ReadonlyMap<string, Observed>, alone: readonly ReadonlyMap<string, Observed>[]): PlantedFlip[] {
  const found: PlantedFlip[] = [];
  for (const id of cases) {
    // Not in the suite's report (it could not collect the file there): only the runs on their own speak.
    const inSuite = suite.get(id);
    const apart = alone.map((run) => run.get(id) ?? "missing");
    const steered = inSuite === "passed" && apart.length > 0 && apart.every((outcome) => outcome !== "passed");
    const all = inSuite === undefined ? apart : [inSuite, ...apart];
    if (steered || !flips(all)) continue;
    found.push({ id, passed: all.filter((outcome) => outcome === "passed").length, runs: all.length });
  }
  return found;
}

/** What a defective packet says of planted cases that flip. */
export function describePlantedFlips(found: readonly PlantedFlip[]): string {
  const named = found.map((flip) => `${flip.id} (passed ${flip.passed} of ${flip.runs} runs)`).join(", ");
  return `planted case flips: ${named}; a planted test must give the same outcome on every run (make it deterministic), so this packet is never merged on a lucky run`;
}

/**
 * Pure: which known flaky tests a rerun on the tip found steady again: rerun there at least twice, every
 * outcome the same.
 */
export function steadyAgain(observations: readonly RerunObservation[], known: ReadonlySet<string>): { id: string; tip: Observed[] }[] {
  return observations.filter((observed) => known.has(observed.id) && observed.tip.length >= 3 && !flips(observed.tip)).map((observed) => ({ id: observed.id, tip: [...observed.tip] }));
}

/**
 * Pure: a gate's results with each flaky test's outcome as the baseline had it: what the tree seeds as the
 * next baseline and the landing's tripwire compares, so a chance failure left out of the verdict neither
 * marks the test failing for the next packets nor sounds the alarm.
 */
export function flakyAsAtBaseline(results: readonly TestResult[], baseline: readonly TestResult[], flaky: readonly Pick<FlakyTest, "id">[]): TestResult[] {
  const ids = new Set(flaky.map((test) => test.id));
  const before = outcomesById(baseline);
  return results.map((result) => {
    const was = ids.has(result.id) ? before.get(result.id) : undefined;
    return was ? { ...result, outcome: was } : result;
  });
}
