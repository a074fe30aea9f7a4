import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Surface } from "../config/types.js";
import { runCommandGate, TESTS_PLACEHOLDER } from "../gates/command.js";
import type { TestResult } from "../gates/junit.js";
import type { GateReport } from "../gates/types.js";
import { reduceToCommit } from "../git/worktree.js";
import { HOLDOUT_DIR, hiddenCases, judgeHoldout } from "../guards/holdout.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import type { Packet } from "../packet/types.js";
import { checkInterrupted, type RunContext } from "./context.js";

/**
 * Runs a packet's holdout tests in the gated tree and removes them again. The report says only how many
 * hidden cases ran and failed, and which invariants they guard: never their names or output.
 */
export async function runHoldout(
  ctx: RunContext,
  input: { packet: Packet; worktree: string; surface: Surface; runDir: string; files: readonly string[] },
): Promise<{ report: GateReport; ran: number; failed: number; alone: boolean }> {
  const { packet, worktree, surface, files } = input;
  const started = Date.now();
  const source = join(ctx.root, HOLDOUT_DIR, packet.id);
  for (const file of files) {
    mkdirSync(dirname(join(worktree, file)), { recursive: true });
    copyFileSync(join(source, file), join(worktree, file));
  }
  const cases: TestResult[] = [];
  try {
    const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
    const inSurface = files.filter((file) => file.startsWith(prefix)).map((file) => file.slice(prefix.length));
    for (const gate of surface.gates.filter((candidate) => candidate.tests)) {
      const { results } = await runCommandGate({
        gate: { ...gate, name: `holdout-${gate.name}` },
        surface,
        worktree,
        changed: [],
        runDir: join(input.runDir, "holdout"),
        timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
        baseline: undefined,
        tests: inSurface,
        signal: ctx.signal,
        ...sandboxed(ctx, worktree, surface.network),
      });
      checkInterrupted(ctx.signal);
      // Named by {tests}, the gate ran the hidden files alone: every case is theirs (node:test names no files).
      cases.push(...hiddenCases(results ?? [], files, surface.dir, new RegExp(TESTS_PLACEHOLDER.source).test(gate.run)));
    }
  } finally {
    await reduceToCommit(worktree); // the hidden files leave the tree before anything else reads it
  }
  // Every tests gate named the hidden files ({tests}): they ran alone, so what they yielded is all they hold.
  const alone = surface.gates.filter((gate) => gate.tests).every((gate) => new RegExp(TESTS_PLACEHOLDER.source).test(gate.run));
  const verdict = judgeHoldout(
    cases,
    files.length,
    packet.invariants.map((invariant) => invariant.id),
  );
  return { ...verdict, alone, report: { name: "holdout", durationMs: Date.now() - started, findings: [], status: verdict.status, summary: verdict.summary } };
}
