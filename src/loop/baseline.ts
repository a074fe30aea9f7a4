import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Surface } from "../config/types.js";
import { runCommandGate } from "../gates/command.js";
import type { TestResult } from "../gates/junit.js";
import { STATE_DIR } from "../ledger/store.js";
import { checkInterrupted, type RunContext } from "./context.js";

export type TestRun =
  | { ok: true; results: Map<string, TestResult[]>; cached: boolean }
  | { ok: false; reason: string };

/** The per-test results of the surface's tests gates at a commit, cached by commit and gate command. */
export async function measureBaseline(ctx: RunContext, input: { worktree: string; surface: Surface; commit: string; runDir: string }): Promise<TestRun> {
  const cacheFile = join(ctx.root, STATE_DIR, "baselines", `${input.commit}-${input.surface.name}.json`);
  const gates = input.surface.gates.filter((gate) => gate.tests);
  const key = gates.map((gate) => gate.run).join("\n");
  try {
    const cached = JSON.parse(readFileSync(cacheFile, "utf8")) as { key: string; results: Record<string, TestResult[]> };
    if (cached.key === key) return { ok: true, results: new Map(Object.entries(cached.results)), cached: true };
  } catch {
    // no usable cache: measure
  }
  const measured = await runTests(ctx, { ...input, runDir: join(input.runDir, "baseline") });
  if (!measured.ok) return measured;
  mkdirSync(join(ctx.root, STATE_DIR, "baselines"), { recursive: true });
  writeFileSync(cacheFile, JSON.stringify({ key, results: Object.fromEntries(measured.results) }));
  return measured;
}

/** Runs the surface's tests gates without comparing: raw per-test results, or why they could not be had. */
export async function runTests(ctx: RunContext, input: { worktree: string; surface: Surface; runDir: string }): Promise<TestRun> {
  mkdirSync(input.runDir, { recursive: true });
  const results = new Map<string, TestResult[]>();
  for (const gate of input.surface.gates.filter((candidate) => candidate.tests)) {
    const { report, results: tests } = await runCommandGate({
      gate, surface: input.surface, worktree: input.worktree, changed: [], runDir: input.runDir,
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs, baseline: undefined, signal: ctx.signal,
    });
    checkInterrupted(ctx.signal);
    if (!tests) return { ok: false, reason: `test gate "${gate.name}" could not be measured: ${report.summary}` };
    results.set(gate.name, tests);
  }
  return { ok: true, results, cached: false };
}
