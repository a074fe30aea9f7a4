import type { TestResult } from "./junit.js";
import { outcomesById } from "./test-compare.js";

/** A test that fails on the tree about to land and did not fail on the tip's own tree: `gate: id`. */
export interface RedOnLanding {
  gate: string;
  id: string;
  /** How it stood on the tip's own tree: passed, skipped, or not there. */
  was: "passed" | "skipped" | "absent";
}

/**
 * Pure: the landing's own check, independent of how the gates judged (DESIGN §9): every test that fails
 * on the tree about to land must have failed the same way on the tip's own tree, as measured there. The
 * gates' verdict already says so when it is green; a test this finds is the factory's own failure (its
 * verdict passed a tree whose tests fail), so nothing lands and the queue stops. Because every landing
 * passes it, a failure a later packet calls "already failing at the baseline" always goes back to a
 * measurement of a tree the factory did not make red, never to a merged packet's failure.
 */
export function redOnLanding(baseline: ReadonlyMap<string, readonly TestResult[]>, landing: ReadonlyMap<string, readonly TestResult[]>): RedOnLanding[] {
  const red: RedOnLanding[] = [];
  for (const [gate, results] of landing) {
    const before = outcomesById(baseline.get(gate) ?? []);
    for (const [id, outcome] of outcomesById(results)) {
      if (outcome !== "failed") continue;
      const was = before.get(id);
      if (was !== "failed") red.push({ gate, id, was: was ?? "absent" });
    }
  }
  return red;
}

/** What the alarm says: the tests, how each stood on the tip, and that it is the factory's failure, not the agent's. */
export function describeRedOnLanding(red: readonly RedOnLanding[], tip: string, packet: string): string {
  const shown = red.slice(0, 5).map((test) => `${test.id} (${test.was === "absent" ? "not on the tip" : `${test.was} on the tip`})`);
  const more = red.length > shown.length ? ` and ${red.length - shown.length} more` : "";
  return `ALARM: the factory's own verdict passed a tree whose tests fail: ${shown.join(", ")}${more} fail on the tree that was to land on ${tip.slice(0, 10)}; nothing landed and the queue stops. This is a defect of the factory, not of the work: \`factory show ${packet}\` has the gates it passed; once the factory is fixed, \`factory unblock ${packet}\``;
}
