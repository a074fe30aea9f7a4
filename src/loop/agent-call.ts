import { copyFileSync, lstatSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseJsonFile } from "../agents/result.js";
import type { AgentOutcome, Role } from "../agents/types.js";
import type { Surface } from "../config/types.js";
import { appendEvents } from "../ledger/store.js";
import { formatSize } from "../util/size.js";
import { BudgetExhausted } from "./budget.js";
import { checkInterrupted, type RunContext } from "./context.js";
import { agentSandboxed } from "./sandbox.js";

export interface AgentCall {
  role: Role;
  packet: string;
  attempt: number;
  tier: string;
  prompt: string;
  worktree: string;
  runDir: string;
  /** Relative to the worktree: `.factory/result.json` or `.factory/review.json`. */
  output: string;
  round: number;
  /** Remove an old output file first (round 0 always does: a new call starts clean). */
  fresh?: boolean;
  resumeSession?: string;
  /** Programs the implementer may run (its surface's toolchain); none for the reviewer. */
  allowedCommands?: readonly string[];
}

export interface AgentCallResult {
  outcome: AgentOutcome;
  /** The parsed output file: undefined when missing, a string when it is not JSON. */
  json: unknown;
}

/** Runs the tier's agent once, records the outcome and its cost in the ledger, and reads its output file. */
export async function callAgent(ctx: RunContext, call: AgentCall): Promise<AgentCallResult> {
  const tier = ctx.config.tiers.find((candidate) => candidate.name === call.tier);
  if (!tier) throw new Error(`tier "${call.tier}" vanished from the config after preflight`);
  const adapter = ctx.adapters.get(tier.agent);
  if (!adapter) throw new Error(`agent "${tier.agent}" has no adapter after preflight`);
  const exhausted = ctx.budget.exhausted();
  if (exhausted) throw new BudgetExhausted(exhausted);
  const outputPath = join(call.worktree, call.output);
  mkdirSync(dirname(outputPath), { recursive: true });
  if (call.round === 0 || call.fresh) rmSync(outputPath, { force: true });
  ctx.emit({ kind: "step", packet: call.packet, attempt: call.attempt, step: `${call.role}${call.round && !call.fresh ? " (correction)" : ""}`, detail: `${tier.agent} ${tier.model}` });
  const outcome = await adapter.run({
    role: call.role, packet: call.packet, attempt: call.attempt, model: tier.model, prompt: call.prompt,
    worktree: call.worktree, runDir: call.runDir, outputPath, outputRelative: call.output, round: call.round,
    allowedCommands: call.allowedCommands ?? [],
    ...(call.resumeSession ? { resumeSession: call.resumeSession } : {}),
    timeoutMs: ctx.config.limits.agentTimeoutMs, idleTimeoutMs: ctx.config.limits.agentIdleTimeoutMs, signal: ctx.signal,
    // Each role of an attempt keeps its own HOME, never shared with the other.
    ...agentSandboxed(ctx, call.worktree, join(call.runDir, `${call.role}-home`)),
  });
  ctx.budget.add(outcome.costUsd);
  const version = await adapter.version?.();
  await appendEvents(ctx.root, [{
    kind: "agent-finished", packet: call.packet, attempt: call.attempt, role: call.role, outcome: outcome.status,
    durationMs: outcome.durationMs,
    ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
    ...(outcome.model ? { model: outcome.model } : {}),
    ...(outcome.sessionId ? { sessionId: outcome.sessionId } : {}),
    ...(outcome.detail ? { detail: outcome.detail } : {}),
    costSource: outcome.costSource, tier: call.tier,
    ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
    ...(outcome.tokens ? { tokens: outcome.tokens } : {}),
    ...(version ? { version } : {}),
  }]);
  ctx.emit({
    kind: "agent", packet: call.packet, attempt: call.attempt, role: call.role, status: outcome.status, durationMs: outcome.durationMs,
    ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}), ...(outcome.detail ? { detail: outcome.detail } : {}),
  });
  checkInterrupted(ctx.signal); // an agent killed by Ctrl-C did not fail: its attempt was interrupted
  const read = readAgentOutput(outputPath, ctx.config.limits.maxResultSizeBytes);
  if (read.kind === "text") copyFileSync(outputPath, join(call.runDir, `${call.role}-output${call.round ? `-${call.round}` : ""}.json`));
  return { outcome, json: read.kind === "text" ? parseJsonFile(read.text) : read.kind === "refused" ? read.problem : undefined };
}

type OutputRead = { kind: "missing" } | { kind: "text"; text: string } | { kind: "refused"; problem: string };

/**
 * An agent's output file is read only when it is a regular file within the
 * size limit: a FIFO or a device would hang the factory, a huge file would
 * exhaust its memory.
 */
function readAgentOutput(path: string, maxBytes: number): OutputRead {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return { kind: "missing" };
  }
  if (!stat.isFile()) return { kind: "refused", problem: "it is not a regular file (a link, FIFO, device or directory); it was not read" };
  if (stat.size > maxBytes) return { kind: "refused", problem: `it is ${formatSize(stat.size)}, over [limits] max_result_size (${formatSize(maxBytes)}); it was not read` };
  return { kind: "text", text: readFileSync(path, "utf8") };
}

/** The programs a surface's install and gate commands start with: what its implementer may run. */
export function surfaceCommands(surface: Surface | undefined): string[] {
  if (!surface) return [];
  const lines = [surface.install, ...surface.gates.flatMap((gate) => [gate.run, gate.fix])].filter((line): line is string => Boolean(line));
  const programs = lines.map((line) => line.trim().split(/\s+/)[0] ?? "").filter((program) => /^[A-Za-z0-9_.\/-]+$/.test(program));
  return [...new Set(programs)];
}
