import type { SandboxRequest } from "../process/sandbox.js";

/** Who an agent call is for: the assessor, like the reviewer, may only read and write its output file; the planner (`factory cut`) writes files under its output directory. */
export type Role = "implementer" | "reviewer" | "assessor" | "planner";

/** DESIGN §7: what any agent run comes down to. Derived from the output, never from the exit code alone. */
export type AgentStatus = "ok" | "agent-error" | "permission-denied" | "max-turns" | "budget-exhausted" | "rate-limited" | "stalled" | "timed-out" | "crashed";

/** How every adapter's detail begins when the provider itself failed (a 5xx): waited out like a rate limit, and said as what it is. */
export const PROVIDER_FAILED = "the provider failed";

/** Pure: whether a rate-limited outcome is the provider's own failure rather than a limit. */
export function providerFailed(outcome: Pick<AgentOutcome, "status" | "detail">): boolean {
  return outcome.status === "rate-limited" && (outcome.detail ?? "").startsWith(PROVIDER_FAILED);
}

export interface AgentOutcome {
  status: AgentStatus;
  /** Why, for anything but ok. */
  detail?: string;
  sessionId?: string;
  costUsd?: number;
  costSource: "reported" | "computed" | "unknown";
  model?: string;
  turns?: number;
  /** Tokens as the CLI reported them (cached: input read from the provider's cache). */
  tokens?: { input: number; output: number; cached: number };
  /** When rate-limited: when the provider says to come back. */
  resetsAt?: string;
  /** The program could not start where it runs (exit 126 or 127 from the shell): nothing ran, nothing was spent. */
  neverStarted?: true;
  /** The raw output, saved in the attempt's run directory. */
  rawPath: string;
  durationMs: number;
}

export interface AgentRequest {
  role: Role;
  packet: string;
  attempt: number;
  model: string;
  prompt: string;
  worktree: string;
  /** Where this run's prompt and output go; never overwritten. */
  runDir: string;
  /** Where the agent writes its result (implementer) or review (reviewer) JSON. */
  outputPath: string;
  /** 0 for the first call, 1 for the contract-correction round. */
  round: number;
  /** How many times this call was already made and rate-limited (0: the first time). */
  repeat?: number;
  /** Session to resume for the correction round, when the agent reported one. */
  resumeSession?: string;
  /** The output file relative to the worktree, for permission rules. */
  outputRelative: string;
  /** Programs the implementer may run through its shell tool (the surface's toolchain). */
  allowedCommands: readonly string[];
  timeoutMs: number;
  idleTimeoutMs: number;
  signal?: AbortSignal;
  /** Where the agent runs (the adapter adds its CLI's credentials and the prompt file); undefined: unsandboxed. */
  sandbox?: SandboxRequest;
}

export type ProbeResult = { ok: true; models: string[]; costUsd?: number } | { ok: false; reason: string };

export interface AgentAdapter {
  run(request: AgentRequest): Promise<AgentOutcome>;
  /** The CLI's own version line (`--version`), for the per-call record; undefined when it has none. */
  version?(): Promise<string | undefined>;
  /** A tiny call that shows which model really answers, before anything is spent on a packet (CLI kinds only). */
  probe?(input: { model: string; cwd: string; logFile: string; timeoutMs: number }): Promise<ProbeResult>;
}
