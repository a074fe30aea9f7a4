/**
 * The ledger's events. State is never stored: it is the fold of these
 * (see fold.ts). Events are only ever appended; `reset` is itself an event.
 * Bump SCHEMA_VERSION when an event's meaning changes; readers skip events
 * of a newer schema with a warning instead of misreading them.
 */
export const SCHEMA_VERSION = 1;

export interface Owner {
  run: string;
  pid: number;
  host: string;
}

export type GateResult = "pass" | "fail" | "error" | "skipped";
export type Decision = "merge" | "retry" | "block" | "hold";

export type EventBody =
  | ({ kind: "run-started"; options: Record<string, unknown> } & Owner)
  | { kind: "run-ended"; run: string; outcome: "drained" | "halted" | "interrupted"; reason?: string }
  /** The shared remote could not be reached from this run: it waits (nothing spent) until `remote-reachable`. */
  | { kind: "remote-unreachable"; run: string; remote: string; since: string; reason: string }
  | { kind: "remote-reachable"; run: string; remote: string }
  /** At a run's start: whole-tree gates red at the tip that queued packets repair; the surface's other packets wait for them to land. */
  | { kind: "repairs-first"; run: string; surface: string; gates: string[]; repairers: string[]; waiting: string[] }
  | { kind: "run-lock-taken-over"; run: string; previous: { pid: number; host: string; startedAt: string } }
  /** A model call that belongs to no packet (the preflight's probe, doctor's reviewer canary): its cost, or the tier's estimate. */
  | { kind: "spent"; for: string; agent: string; model: string; costUsd?: number; estimatedUsd?: number; run?: string }
  /**
   * `factory assess`: an assessor's ruling on one version of a packet (`sha256`, as in packet-registered),
   * its evidence checked by the factory; a changed packet needs a new one. Its calls are `spent` events.
   */
  /** After a landing: how many mutants of the packet's changed lines its planted and hidden tests killed (planning/mutants.ts). */
  | {
      kind: "mutants-measured";
      packet: string;
      commit: string;
      made: number;
      killed: number;
      budget: number;
      reason?: string;
      survivors?: { file: string; line: number; description: string }[];
      killedExample?: { file: string; line: number; description: string };
      /** Chosen but not run: the mutation check's share of the night ran out. */
      unrun?: number;
      /** Stopped past the time limit, counted killed. */
      timedOut?: number;
    }
  | { kind: "assessed"; packet: string; sha256: string; ruling: "ready" | "recut" | "reject"; tier: string; findings: { claim: string; quote?: string; where?: string }[] }
  /** The first event of a ledger `factory ledger repair` started from what git proves; `from` is the old file, kept beside it. */
  | { kind: "ledger-restarted"; from: string; by: string; brokenAt?: number }
  /** Gated attempts waiting to land, gated together once on their combination (merge/batch.ts): green lets them land without a re-gate each. */
  | { kind: "batch-gated"; packets: string[]; attempts: number[]; tip: string; tree: string; verdict: "green" | "red"; failed: string[]; durationMs: number; run?: string }
  | { kind: "packet-registered"; packet: string; sha256: string; file: string }
  /** On the PostgreSQL ledger: the worker that claimed, and the claim's fence (every write of the attempt is conditioned on it). */
  | ({ kind: "claimed"; packet: string; attempt: number; sha256: string; fence?: number; worker?: string } & Owner)
  | { kind: "attempt-interrupted"; packet: string; attempt: number; reason: string; worktree?: string }
  | { kind: "baseline-measured"; packet: string; commit: string; passed: number; failed: number; cached: boolean }
  | {
      kind: "planted";
      packet: string;
      attempt: number;
      commit: string;
      files: string[];
      cases?: Record<string, { cases: string[]; files: string[]; removed?: string[]; skipped?: Record<string, string>; seen?: string[] }>;
    }
  /**
   * Before an agent call: its reservation (the tier's estimate), so a call that never finishes (its worker
   * killed) still counts, and the cap is checked against every worker's calls in flight. Settled by the
   * agent-finished event naming the same `call`; a call left open when its attempt is interrupted is charged
   * its reservation.
   */
  | { kind: "agent-started"; packet: string; attempt: number; role: "implementer" | "reviewer" | "assessor"; tier: string; call: string; reservedUsd: number; run: string }
  | {
      kind: "agent-finished";
      packet: string;
      attempt: number;
      /** The agent-started event's call this settles. */
      call?: string;
      /** An assessor's call is about no attempt: attempt 0. */
      role: "implementer" | "reviewer" | "assessor";
      /** The cost counted for a call whose cost is unknown: the tier's estimate_usd. */
      estimatedUsd?: number;
      /** sha256 of the prompt the agent was given. */
      promptSha256?: string;
      outcome: string;
      costUsd?: number;
      model?: string;
      sessionId?: string;
      durationMs: number;
      detail?: string;
      /** Where costUsd came from: the CLI reported it, the factory computed it from tokens and prices, or unknown. */
      costSource?: "reported" | "computed" | "unknown";
      /** A cost the agent reported that was not believed (not a number, negative, or above its tier's max_call_usd), as it was written. */
      suspectCost?: string;
      turns?: number;
      tokens?: { input: number; output: number; cached: number };
      /** The agent CLI's `--version` line. */
      version?: string;
      tier?: string;
    }
  | {
      kind: "gate-finished";
      packet: string;
      attempt: number;
      gate: string;
      result: GateResult;
      durationMs: number;
      command?: string;
      exitCode?: number;
      detail?: string;
    }
  | {
      kind: "review-recorded";
      packet: string;
      attempt: number;
      verdict: string;
      effective: string;
      overrides: string[];
      held: number;
      violated: number;
      unverifiable: number;
      /** The rulings and findings as the factory read them: what `approve` shows a person (never a file an agent could rewrite). */
      rulings?: { id: string; status: string; evidence?: string }[];
      findings?: { severity: string; claim: string; where?: string }[];
    }
  | {
      kind: "decided";
      packet: string;
      attempt: number;
      decision: Decision;
      reasons: string[];
      refund?: boolean;
      feedback?: string[];
      fingerprint?: string;
      /** A retry's work the next attempt may continue: the gated commit and the planted commit it was made on. */
      work?: { commit: string; from: string };
    }
  /**
   * A test that failed in the candidate flipped when run again on the untouched tip `tip` (gates/flaky.ts):
   * left out of the packet's verdict, and named in `status` and the brief until it is steady again.
   */
  | { kind: "flaky-found"; packet: string; attempt: number; gate: string; test: string; tip: string; tipRuns: string[]; candidateRuns: string[] }
  /** A known flaky test gave the same outcome on every run on the tip: it is no longer excused. */
  | { kind: "flaky-steady"; packet: string; attempt: number; gate: string; test: string; tip: string; tipRuns: string[] }
  /** The tripwire saw the user's checkout or refs change while the packet's code ran in the sandbox: noted, not blamed. */
  | { kind: "outside-change-seen"; packet: string; attempt: number; changes: string[] }
  | { kind: "continued"; packet: string; attempt: number; fromAttempt: number; commit: string }
  | { kind: "merge-blocked"; packet: string; attempt: number; reason: string; commit: string; fork: string }
  | { kind: "merged"; packet: string; attempt: number; commit: string; tree: string }
  | { kind: "held"; packet: string; attempt: number; tree: string; branch: string; commit: string; fork: string }
  /** Pull-request mode: the gated, reviewed squash was pushed to `branch` on the remote and PR `number` is open for it. */
  | { kind: "pr-opened"; packet: string; attempt: number; number: number; url: string; branch: string; head: string; tree: string; fork: string }
  /** The implementer ended with a question for a person (`status = "question"`): no attempt spent; the packet waits for `factory answer`. */
  | { kind: "asked"; packet: string; attempt: number; sha256: string; question: string; suggestions?: string[] }
  /** A person's answer to the packet's open question, bound to the packet's version: text in the next attempt's brief. */
  | { kind: "answered"; packet: string; sha256: string; attempt: number; by: string; answer: string }
  | { kind: "approved"; packet: string; by: string; tree: string }
  | { kind: "rejected"; packet: string; by: string; reason: string }
  /** fix: what to change when the packet itself is at fault (more attempts or a reset cannot help). */
  | { kind: "blocked"; packet: string; attempt?: number; reason: string; fix?: string }
  | { kind: "unblocked"; packet: string; extraAttempts: number; by: string }
  | { kind: "reset"; packet: string; by: string }
  /** What the implementer said of its attempt (its result file's status), kept beside the facts the gates found: `report --agents` sets one against the other. */
  | { kind: "implementer-reported"; packet: string; attempt: number; status: "complete" | "blocked" | "failed" | "question"; verification: boolean }
  /** `factory pause`: every worker stops claiming (and, with `interrupt`, stops its running attempts, unspent) until `factory resume`. */
  | { kind: "paused"; by: string; interrupt: boolean }
  | { kind: "resumed"; by: string }
  /** A person says the landing `commit` of the packet is gone from the target on purpose (`factory acknowledge`): no longer warned about. */
  | { kind: "landing-gone-acknowledged"; packet: string; commit: string; by: string };

export type EventKind = EventBody["kind"];

/** The packet an event belongs to, if any (a run's own events and `spent` belong to none). */
export function eventPacket(event: EventBody): string | undefined {
  return "packet" in event ? event.packet : undefined;
}

/** An event as stored: the body plus schema version and timestamp. */
export type LedgerEvent = EventBody & { v: number; ts: string };

export function stamp(body: EventBody, now: Date = new Date()): LedgerEvent {
  return { v: SCHEMA_VERSION, ts: now.toISOString(), ...body };
}

export const EVENT_KINDS: readonly EventKind[] = [
  "run-started",
  "run-ended",
  "remote-unreachable",
  "remote-reachable",
  "repairs-first",
  "run-lock-taken-over",
  "spent",
  "ledger-restarted",
  "batch-gated",
  "packet-registered",
  "assessed",
  "mutants-measured",
  "claimed",
  "attempt-interrupted",
  "baseline-measured",
  "planted",
  "agent-finished",
  "gate-finished",
  "review-recorded",
  "decided",
  "continued",
  "outside-change-seen",
  "flaky-found",
  "flaky-steady",
  "merge-blocked",
  "merged",
  "held",
  "pr-opened",
  "asked",
  "answered",
  "approved",
  "rejected",
  "blocked",
  "unblocked",
  "reset",
  "landing-gone-acknowledged",
  "agent-started",
  "implementer-reported",
  "paused",
  "resumed",
];
