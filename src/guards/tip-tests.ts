import type { Surface } from "../config/types.js";
import type { Change } from "../git/diff.js";
import { checkoutPathsFrom, reduceToCommit } from "../git/worktree.js";
import { judgeTests, runCommandGate } from "../gates/command.js";
import type { FlakyTest } from "../gates/flaky.js";
import type { TestResult } from "../gates/junit.js";
import { matchesAny } from "../gates/paths.js";
import type { PlantedCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import { checkInterrupted, type RunContext } from "../loop/context.js";
import type { Packet } from "../packet/types.js";
import { sandboxed } from "./sandbox-policy.js";
import { isTestPath } from "./tamper.js";

/**
 * The team's tests judge the candidate (issue 38 §2): a change that edits what the verdict is made of (an
 * existing test's expected values, a mock over the function under test, an emptied cases file under
 * `tests/`, a test support module) is also run with the tip's versions of those files, against the
 * candidate's source, and must give the baseline's outcomes there too. Only what the packet declares
 * changed on purpose (`changed_tests`), retires (`retired_tests`, whole files) or lets the agent delete
 * (`deletable_paths`) is judged by the candidate's copy alone.
 */
export const TIP_TESTS_SUFFIX = "(the team's tests as at the tip)";

/**
 * Pure: the test files, test data and test support modules the tip had that the change edited or removed, and
 * that the tip's versions judge. Planted files are not among them: any change to one fails the untouched gate.
 */
export function tipJudgedPaths(changes: readonly Change[], packet: Pick<Packet, "changedTests" | "retiredTests" | "deletablePaths">, planted: readonly string[] = []): string[] {
  const retiredFiles = packet.retiredTests.filter((test) => !test.includes("::"));
  return changes
    .filter((change) => change.kind !== "added" && isTestPath(change.path) && !planted.includes(change.path))
    .filter((change) => !matchesAny(change.path, packet.changedTests) && !matchesAny(change.path, retiredFiles))
    .filter((change) => !(change.kind === "deleted" && matchesAny(change.path, packet.deletablePaths)))
    .map((change) => change.path)
    .sort();
}

export interface TipTestsInput {
  worktree: string;
  surface: Surface;
  runDir: string;
  /** The tip's commit in the worktree (the planted commit): where the team's versions come from. */
  from: string;
  paths: readonly string[];
  baseline: ReadonlyMap<string, TestResult[]>;
  plantedCases: Readonly<Record<string, PlantedCases>>;
  takenAway: readonly string[];
  changed: readonly string[];
  /** Per tests gate, the tests the main run found flaky: left out here too. */
  flaky: ReadonlyMap<string, FlakyTest[]>;
  freshen: () => Promise<void>;
}

/**
 * Runs every tests gate of the surface once more on the candidate with `paths` put back as the tip has
 * them, judged against the same baseline; the worktree is its commit again afterwards.
 */
export async function runTipTests(ctx: RunContext, input: TipTestsInput): Promise<GateReport[]> {
  const reports: GateReport[] = [];
  const named = input.paths.slice(0, 3).join(", ") + (input.paths.length > 3 ? `, and ${input.paths.length - 3} more` : "");
  for (const gate of input.surface.gates.filter((candidate) => candidate.tests)) {
    await input.freshen();
    await checkoutPathsFrom(input.worktree, input.from, input.paths);
    let report: GateReport;
    try {
      const planted = input.plantedCases[gate.name];
      const flaky = input.flaky.get(gate.name);
      const gated = await runCommandGate({
        gate: { ...gate, name: `${gate.name} ${TIP_TESTS_SUFFIX}` },
        surface: input.surface,
        worktree: input.worktree,
        changed: input.changed,
        runDir: input.runDir,
        timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
        baseline: input.baseline.get(gate.name) ?? [],
        ...(planted ? { planted } : {}),
        takenAway: input.takenAway,
        finishedOnBaseline: input.baseline.has(gate.name),
        signal: ctx.signal,
        ...sandboxed(ctx, input.worktree, input.surface.network),
      });
      // A test the main run found flaky is left out here as there, not blamed on a second run.
      report = gated.judged && flaky?.length ? judgeTests({ ...gated.judged, reruns: { flaky, regressions: [] } }) : gated.report;
    } finally {
      await reduceToCommit(input.worktree);
    }
    checkInterrupted(ctx.signal);
    const why = `with the tip's versions of the test files the change edited (${named})`;
    reports.push({
      ...report,
      summary:
        report.status === "fail" ? `${report.summary} ${why}: the change edits the tests that judge it; name them in the packet's changed_tests if that is the task` : `${report.summary} ${why}`,
    });
  }
  return reports;
}
