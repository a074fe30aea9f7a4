import { join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { runCommandGate } from "../gates/command.js";
import { type FlakyTest, flips, judgeReruns, MAX_RERUN_TESTS, type Observed, type RerunObservation, type RerunVerdict, steadyAgain } from "../gates/flaky.js";
import type { TestResult } from "../gates/junit.js";
import { outcomesById } from "../gates/test-compare.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import { flakyKey } from "../ledger/fold.js";
import { inScratch } from "./baseline.js";
import { checkInterrupted, type RunContext } from "./context.js";

export interface RerunInput {
  gate: GateConfig;
  surface: Surface;
  /** The candidate's checkout, at the commit the gate judged. */
  worktree: string;
  runDir: string;
  /** The tests to run again: passed at the baseline, failing in the candidate. */
  ids: readonly string[];
  /** The candidate's first run, and the baseline (the tip's first run). */
  first: readonly TestResult[];
  baseline: readonly TestResult[];
  /** The commit the baseline was measured at; undefined: the tip is not run again. */
  tip: string | undefined;
  /** How long the first run took: the reruns' time is bounded by it. */
  firstMs: number;
  /** Restores the candidate's checkout to its commit before each rerun there. */
  freshen: () => Promise<void>;
}

/** What the reruns of one gate found: the verdict, the known flaky tests a tip rerun found steady, and the tip it ran on. */
export interface Reruns {
  gate: string;
  tip: string | undefined;
  verdict: RerunVerdict;
  steady: { id: string; tip: Observed[] }[];
  /** The reruns stopped before all of them ran: their time ran out. */
  cutShort: boolean;
}

/** The least time the reruns of one gate may take, whatever the first run took. */
const MIN_RERUN_BUDGET_MS = 120_000;

/**
 * Runs the failing tests again the way they failed — the whole suite, in its own order, as the gate ran it
 * (issue 55 §3: a test that fails alone and passes beside the others it imports through is no flaky test) —
 * `[tests] reruns` times in the candidate and as many times in a scratch checkout of the untouched tip
 * (twice as many there when a test failed only now and then in the candidate and not yet at the tip),
 * within max(2 minutes, (3 × reruns + 1) × the first run's time); then judges them (gates/flaky.ts).
 */
export async function rerunFailing(ctx: RunContext, input: RerunInput): Promise<Reruns> {
  const times = ctx.config.tests.reruns;
  const ids = input.ids.slice(0, MAX_RERUN_TESTS);
  const deadline = Date.now() + Math.max(MIN_RERUN_BUDGET_MS, (3 * times + 1) * input.firstMs);
  const firstOutcomes = outcomesById(input.first);
  const baseOutcomes = outcomesById(input.baseline);
  const candidate = new Map<string, Observed[]>(ids.map((id) => [id, [firstOutcomes.get(id) ?? "missing"]]));
  const tip = new Map<string, Observed[]>(ids.map((id) => [id, [baseOutcomes.get(id) ?? "missing"]]));
  let cutShort = false;
  const runIn = async (worktree: string, into: Map<string, Observed[]>, label: string, before?: () => Promise<void>, from = 0): Promise<void> => {
    for (let run = from + 1; run <= from + times; run++) {
      if (Date.now() > deadline) {
        cutShort = true;
        return;
      }
      await before?.();
      const { results } = await runCommandGate({
        gate: { ...input.gate, name: `${input.gate.name} (rerun ${run} ${label})` },
        surface: input.surface,
        worktree,
        changed: [],
        runDir: join(input.runDir, "reruns"),
        timeoutMs: input.gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
        baseline: undefined,
        signal: ctx.signal,
        ...sandboxed(ctx, worktree, input.surface.network),
      });
      checkInterrupted(ctx.signal);
      const outcomes = outcomesById(results ?? []);
      for (const id of ids) into.get(id)?.push(outcomes.get(id) ?? "missing");
    }
  };
  await runIn(input.worktree, candidate, "in the candidate", input.freshen);
  if (input.tip) {
    await inScratch(ctx, { surface: input.surface, commit: input.tip, runDir: join(input.runDir, "reruns"), label: "rerun" }, async (checkout) => {
      if (!("worktree" in checkout)) return;
      await runIn(checkout.worktree, tip, "at the tip");
      // Failing only now and then here and steady at the tip so far: the tip gets as many runs again before the change is blamed.
      const undecided = ids.some((id) => flips(candidate.get(id) ?? []) && !flips(tip.get(id) ?? []));
      if (undecided) await runIn(checkout.worktree, tip, "at the tip", undefined, times);
    });
  }
  const observations: RerunObservation[] = ids.map((id) => ({ id, candidate: candidate.get(id) ?? [], tip: tip.get(id) ?? [] }));
  const known = new Set(
    Object.values((await ctx.ledger.read()).state.flaky)
      .filter((entry) => entry.gate === input.gate.name)
      .map((entry) => entry.test),
  );
  return { gate: input.gate.name, tip: input.tip, verdict: judgeReruns(observations), steady: steadyAgain(observations, known), cutShort };
}

/** The ledger's record of what the reruns found: each flaky test, and each known one found steady again. */
export async function recordReruns(ctx: RunContext, packet: string, attempt: number, found: readonly Reruns[]): Promise<void> {
  const known = (await ctx.ledger.read()).state.flaky;
  const events = found.flatMap((reruns) => [
    ...reruns.verdict.flaky.map((test: FlakyTest) => ({
      kind: "flaky-found" as const,
      packet,
      attempt,
      gate: reruns.gate,
      test: test.id,
      tip: reruns.tip ?? "",
      tipRuns: test.tip,
      candidateRuns: test.candidate,
    })),
    ...reruns.steady
      .filter((test) => known[flakyKey(reruns.gate, test.id)])
      .map((test) => ({ kind: "flaky-steady" as const, packet, attempt, gate: reruns.gate, test: test.id, tip: reruns.tip ?? "", tipRuns: test.tip })),
  ]);
  if (events.length > 0) await ctx.ledger.append(events);
}
