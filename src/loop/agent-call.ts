import { createHash, randomUUID } from "node:crypto";
import { copyFileSync, lstatSync, mkdirSync, readFileSync, rmSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { parseJsonFile } from "../agents/result.js";
import { agentProgramPath } from "../agents/shell-program.js";
import { type AgentAdapter, type AgentOutcome, providerFailed, type Role } from "../agents/types.js";
import { callCeilingUsd, type Surface, type Tier, UNKNOWN_COST_ESTIMATE_USD } from "../config/types.js";
import { agentSandboxed } from "../guards/sandbox-policy.js";
import { stamp } from "../ledger/events.js";
import { lowSpace } from "../util/resources.js";
import { formatSize } from "../util/size.js";
import { sleepUntil } from "../util/sleep.js";
import { BudgetExhausted } from "./budget.js";
import { checkInterrupted, type RunContext } from "./context.js";

export interface AgentCall {
  /** The planner's call is about no packet: `factory cut` makes it itself. */
  role: Exclude<Role, "planner">;
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
  const outputPath = join(call.worktree, call.output);
  mkdirSync(dirname(outputPath), { recursive: true });
  if (call.round === 0 || call.fresh) rmSync(outputPath, { force: true });
  const limits = ctx.config.limits;
  let outcome: AgentOutcome;
  let waitedMs = 0;
  for (let repeat = 0; ; repeat++) {
    // Another worker's call on this agent hit a limit: this one waits too, before anything is spent.
    const pending = ctx.waits.until(tier.agent);
    if (pending > Date.now()) await sleepUntil(pending, ctx.signal);
    checkInterrupted(ctx.signal);
    // A disk too full to hold what a call writes is the machine's: found before the call is paid for, not after.
    const low = lowSpace([call.worktree, call.runDir]);
    if (low) throw Object.assign(new Error(`no space left before the ${call.role} call: ${low}`), { code: "ENOSPC" });
    const agent = ctx.config.agents?.[tier.agent]; // a partial config (a unit test's) may have no agents table
    const program = agent ? agentProgramPath(agent, ctx.root) : undefined;
    outcome = await runAndRecord(ctx, call, {
      agent: tier.agent,
      model: tier.model,
      estimateUsd: tier.estimateUsd ?? UNKNOWN_COST_ESTIMATE_USD,
      ceilingUsd: callCeilingUsd(tier),
      adapter,
      outputPath,
      repeat,
      program,
    });
    if (outcome.status !== "rate-limited") {
      ctx.waits.clear(tier.agent);
      break;
    }
    // A rate limit is the provider's, not the packet's: the same call is made again after the wait, in the
    // same attempt and claim. Past rate_limit_wait in all, the attempt ends and the scheduler decides.
    const wait = ctx.waits.limit(tier.agent, outcome.resetsAt, Date.now(), limits.rateLimitWaitMs, limits.rateLimitMaxWaits);
    if ("halt" in wait || wait.beyond || waitedMs + (wait.until - Date.now()) > limits.rateLimitWaitMs) break;
    const source = outcome.resetsAt ? "the reset it reported" : "backing off";
    ctx.emit({
      kind: "notice",
      packet: call.packet,
      message: `${providerFailed(outcome) ? "provider failing" : "rate-limited"}: agent "${tier.agent}" waits until ${new Date(wait.until).toISOString()} (${source}; no attempt spent); every packet on it waits too`,
    });
    waitedMs += Math.max(0, wait.until - Date.now());
    await sleepUntil(wait.until, ctx.signal);
  }
  checkInterrupted(ctx.signal); // an agent killed by Ctrl-C did not fail: its attempt was interrupted
  const read = readAgentOutput(outputPath, ctx.config.limits.maxResultSizeBytes);
  if (read.kind === "text") copyFileSync(outputPath, join(call.runDir, `${call.role}-output${call.round ? `-${call.round}` : ""}.json`));
  return { outcome, json: read.kind === "text" ? parseJsonFile(read.text) : read.kind === "refused" ? read.problem : undefined };
}

/** One call of the agent, its outcome recorded in the ledger and the budget. */
async function runAndRecord(
  ctx: RunContext,
  call: AgentCall,
  how: { agent: string; model: string; estimateUsd: number; ceilingUsd: number; adapter: AgentAdapter; outputPath: string; repeat: number; program?: string | undefined },
): Promise<AgentOutcome> {
  const reservation = await reserveCall(ctx, { packet: call.packet, attempt: call.attempt, role: call.role, tier: call.tier, reservedUsd: how.estimateUsd });
  ctx.emit({ kind: "step", packet: call.packet, attempt: call.attempt, step: `${call.role}${call.round && !call.fresh ? " (correction)" : ""}`, detail: `${how.agent} ${how.model}` });
  const reported = await how.adapter.run({
    role: call.role,
    packet: call.packet,
    attempt: call.attempt,
    model: how.model,
    prompt: call.prompt,
    worktree: call.worktree,
    runDir: call.runDir,
    outputPath: how.outputPath,
    outputRelative: call.output,
    round: call.round,
    repeat: how.repeat,
    allowedCommands: call.allowedCommands ?? [],
    ...(call.resumeSession ? { resumeSession: call.resumeSession } : {}),
    timeoutMs: ctx.config.limits.agentTimeoutMs,
    idleTimeoutMs: ctx.config.limits.agentIdleTimeoutMs,
    signal: ctx.signal,
    // Each role of an attempt keeps its own HOME, never shared with the other.
    ...agentSandboxed(ctx, call.worktree, join(call.runDir, `${call.role}-home`), how.program),
  });
  const outcome = believableCost(reported, how.ceilingUsd);
  const suspect = outcome !== reported ? reported.costUsd : undefined;
  if (suspect !== undefined) {
    const why = Number.isFinite(suspect) && suspect >= 0 ? `more than one call on tier "${call.tier}" can plausibly cost ($${how.ceilingUsd}, max_call_usd)` : "not a cost";
    ctx.emit({ kind: "notice", packet: call.packet, message: `agent "${how.agent}" reported a cost of ${String(suspect)}, ${why}: recorded as suspect, and its tier's estimate is charged` });
  }
  // A call of unknown cost counts at its tier's estimate, never as $0 (a rate-limited call, or a program that never started, spent nothing).
  const estimatedUsd = outcome.costUsd === undefined && outcome.status !== "rate-limited" && !outcome.neverStarted ? how.estimateUsd : undefined;
  ctx.budget.add(outcome.costUsd ?? estimatedUsd);
  const version = await how.adapter.version?.();
  await ctx.ledger.append([
    {
      kind: "agent-finished",
      packet: call.packet,
      attempt: call.attempt,
      call: reservation,
      role: call.role,
      outcome: outcome.status,
      durationMs: outcome.durationMs,
      ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
      ...(outcome.model ? { model: outcome.model } : {}),
      ...(outcome.sessionId ? { sessionId: outcome.sessionId } : {}),
      ...(outcome.detail ? { detail: outcome.detail } : {}),
      costSource: outcome.costSource,
      tier: call.tier,
      promptSha256: createHash("sha256").update(call.prompt).digest("hex"),
      ...(estimatedUsd !== undefined ? { estimatedUsd } : {}),
      ...(suspect !== undefined ? { suspectCost: String(suspect) } : {}),
      ...(outcome.turns !== undefined ? { turns: outcome.turns } : {}),
      ...(outcome.tokens ? { tokens: outcome.tokens } : {}),
      ...(version ? { version } : {}),
    },
  ]);
  ctx.emit({
    kind: "agent",
    packet: call.packet,
    attempt: call.attempt,
    role: call.role,
    status: outcome.status,
    durationMs: outcome.durationMs,
    ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
    ...(outcome.detail ? { detail: outcome.detail } : {}),
  });
  return outcome;
}

/**
 * Pure: the outcome with its self-reported cost kept only when it is a finite, non-negative number no
 * higher than `ceilingUsd` (what one call on its tier can plausibly cost); any other (a negative cost would
 * lower the spend under max_cost_usd, NaN would poison it, $1e308 would end the night's budget) makes the
 * cost unknown, so the tier's estimate is charged.
 */
export function believableCost(outcome: AgentOutcome, ceilingUsd = Number.POSITIVE_INFINITY): AgentOutcome {
  if (outcome.costUsd === undefined || (Number.isFinite(outcome.costUsd) && outcome.costUsd >= 0 && outcome.costUsd <= ceilingUsd)) return outcome;
  const { costUsd: _refused, ...rest } = outcome;
  return { ...rest, costSource: "unknown" };
}

/**
 * One call of an agent outside a run (doctor's canaries, `factory cut`'s
 * planner): in the same sandbox as in a run, with no rate-limit wait and no
 * correction round; what it is to be charged comes back with it, for a
 * `spent` event.
 */
export async function callOutsideRun(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { adapter: AgentAdapter; tier: Tier; role: Role; packet: string; prompt: string; worktree: string; runDir: string; output: string; home: string; program?: string | undefined },
): Promise<{ outcome: AgentOutcome; spend: ReturnType<typeof chargedSpend> }> {
  const outcome = await input.adapter.run({
    role: input.role,
    packet: input.packet,
    attempt: input.role === "planner" ? 0 : 1,
    model: input.tier.model,
    prompt: input.prompt,
    worktree: input.worktree,
    runDir: input.runDir,
    outputPath: join(input.worktree, input.output),
    outputRelative: input.output,
    round: 0,
    repeat: 0,
    allowedCommands: [],
    timeoutMs: ctx.config.limits.agentTimeoutMs,
    idleTimeoutMs: ctx.config.limits.agentIdleTimeoutMs,
    signal: ctx.signal,
    ...agentSandboxed(ctx, input.worktree, input.home, input.program),
  });
  return { outcome, spend: chargedSpend(outcome, input.tier) };
}

/**
 * Pure: what a call made outside a run (the reviewer canary, the planner) is charged, for a `spent` event:
 * its believable reported cost, else its tier's estimate; undefined when its program never started.
 */
export function chargedSpend(
  outcome: AgentOutcome,
  tier: Pick<Tier, "agent" | "model" | "estimateUsd"> & Partial<Pick<Tier, "maxCallUsd">>,
): { agent: string; model: string; costUsd?: number; estimatedUsd?: number } | undefined {
  if (outcome.neverStarted) return undefined;
  const believed = believableCost(outcome, callCeilingUsd({ estimateUsd: tier.estimateUsd, maxCallUsd: tier.maxCallUsd })).costUsd;
  return { agent: tier.agent, model: tier.model, ...(believed !== undefined ? { costUsd: believed } : { estimatedUsd: tier.estimateUsd ?? UNKNOWN_COST_ESTIMATE_USD }) };
}

type OutputRead = { kind: "missing" } | { kind: "text"; text: string } | { kind: "refused"; problem: string };

/**
 * An agent's output file is read only when it is a regular file within the
 * size limit: a FIFO or a device would hang the factory, a huge file would
 * exhaust its memory.
 */
function readAgentOutput(path: string, maxBytes: number): OutputRead {
  let stat: Stats;
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
  const programs = lines.map((line) => line.trim().split(/\s+/)[0] ?? "").filter((program) => /^[A-Za-z0-9_./-]+$/.test(program));
  return [...new Set(programs)];
}

/**
 * Records an agent call's start with its reservation, refusing it
 * (BudgetExhausted) when the cap is reached: with a fleet window, the check
 * and the record are one ledger transaction, so workers starting calls at
 * once see each other's reservations. Returns the call's id, which the
 * agent-finished event names to settle it.
 */
async function reserveCall(ctx: RunContext, call: { packet: string; attempt: number; role: AgentCall["role"]; tier: string; reservedUsd: number }): Promise<string> {
  const id = randomUUID();
  const started = stamp({ kind: "agent-started", ...call, call: id, run: ctx.owner.run });
  if (ctx.budget.windowMs === undefined) {
    const exhausted = ctx.budget.exhausted();
    if (exhausted) throw new BudgetExhausted(exhausted);
    await ctx.ledger.append([started]);
    return id;
  }
  const refused = await ctx.ledger.transaction(async (tx) => {
    const exhausted = ctx.budget.exhausted((await tx.read()).state);
    if (exhausted) return exhausted;
    await tx.append([started]);
    return undefined;
  });
  if (refused) throw new BudgetExhausted(refused);
  return id;
}
