import { shellQuote } from "../gates/paths.js";
import { type RunOutcome, type RunRequest, runCommand } from "../process/run.js";
import { neverStarted } from "./never-started.js";
import { stoppedCall } from "./stopped.js";
import type { AgentOutcome, AgentRequest, AgentStatus } from "./types.js";

/** A call of an agent CLI that ran (it was not found, or could not start, before any of this). */
export type RanOutcome = Exclude<RunOutcome, { kind: "spawn-error" }>;

/** What is known of every call: where its raw stream is, and how long it took. */
export interface CallBase {
  rawPath: string;
  durationMs: number;
}

/**
 * The one way the factory calls an agent CLI (Claude Code, Codex, Gemini CLI): the command line, quoted; the
 * prompt on stdin; the call's time limits, abort signal and raw log; a program that is not there (126, 127)
 * or cannot start said as such. Each adapter keeps only what differs: its arguments, where it runs (its
 * environment and sandbox) and how its stream reads (`read`).
 */
export async function callAgentCli(
  request: Pick<AgentRequest, "prompt" | "timeoutMs" | "idleTimeoutMs" | "signal">,
  call: { bin: string; args: readonly string[]; where: Pick<RunRequest, "cwd" | "env" | "sandbox">; rawPath: string; read: (outcome: RanOutcome, base: CallBase) => AgentOutcome },
): Promise<AgentOutcome> {
  const outcome = await runCommand({
    command: [call.bin, ...call.args].map(shellQuote).join(" "),
    ...call.where,
    input: request.prompt,
    timeoutMs: request.timeoutMs,
    idleTimeoutMs: request.idleTimeoutMs,
    logFile: call.rawPath,
    ...(request.signal ? { signal: request.signal } : {}),
  });
  return readCall(outcome, call.rawPath, call.read, await neverStarted(outcome, call.bin, call.where));
}

/** Pure: a call's outcome: never started, could not start, or read from what it said. */
export function readCall(
  outcome: RunOutcome,
  rawPath: string,
  read: (outcome: RanOutcome, base: CallBase) => AgentOutcome,
  missing?: Pick<AgentOutcome, "status" | "neverStarted" | "detail">,
): AgentOutcome {
  const base = { rawPath, durationMs: outcome.durationMs };
  if (missing) return { ...base, costSource: "unknown", ...missing };
  if (outcome.kind === "spawn-error") return { ...base, costSource: "unknown", status: "crashed", detail: outcome.message };
  return read(outcome, base);
}

/**
 * Pure: how a call that ran ended, from its CLI's own status (undefined: it said nothing that ends a call):
 * stopped by the factory (a time limit, a signal), or crashed with no result, or what the CLI said; a model
 * other than the tier's configured one is the agent's error, never an ok.
 */
export function callEnd(
  outcome: RanOutcome,
  status: { status: AgentStatus; detail?: string; resetsAt?: string } | undefined,
  models: { ran: readonly string[]; configured: string; matches: (configured: string, ran: string) => boolean } | undefined,
  what = "a result",
): Pick<AgentOutcome, "status" | "detail" | "resetsAt"> {
  if (outcome.kind !== "exited") return stoppedCall(outcome);
  if (!status)
    return {
      status: "crashed",
      detail: `exited ${outcome.code} without ${what}: ${outcome.tail
        .split("\n")
        .slice(what === "a result" ? -3 : -2)
        .join(" | ")}`,
    };
  const foreign = models ? models.ran.filter((model) => !models.matches(models.configured, model)) : [];
  if (status.status === "ok" && models && foreign.length > 0) return { status: "agent-error", detail: `ran model ${foreign.join(", ")}, but the tier is configured with ${models.configured}` };
  return { status: status.status, ...(status.detail ? { detail: status.detail } : {}), ...(status.resetsAt ? { resetsAt: status.resetsAt } : {}) };
}
