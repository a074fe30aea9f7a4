import { unreachable } from "../util/unreachable.js";
import { eventPacket, type LedgerEvent, type Owner } from "./events.js";

/**
 * A packet's state, as the fold of its events.
 *
 *                 claimed                 merged
 *   queued ───────────────▶ running ─────────────────────────▶ merged
 *    ▲  ▲                  │  │  │ held            approved+merged ▲
 *    │  │ decided(retry),  │  │  └──────▶ awaiting_human ──────────┘
 *    │  │ interrupted      │  │              │ rejected
 *    │  └──────────────────┘  │ blocked      ▼
 *    │◀─────────────────────  ▼           queued
 *    │   unblocked / reset  blocked
 *    │◀──── merge-blocked (waits for a clean checkout; claimable again)
 *    │◀──── answered ◀── awaiting_answer ◀── asked (from running: a question for a person, no attempt spent)
 *
 * Pull-request mode: running ──pr-opened──▶ in_review, then merged (the PR
 * merged), queued (decided retry: a failed check or a requested change is
 * the next attempt's feedback) or blocked (closed unmerged, its head moved).
 *
 * `reset` returns any state to queued with no attempts used; a new version
 * of the packet file does the same, except that merged stays merged.
 */
export type PacketStatus =
  | { state: "queued" }
  | { state: "running"; attempt: number; owner: Owner; since: string }
  | { state: "awaiting_human"; attempt: number; tree: string; branch: string; commit: string; fork: string }
  | { state: "awaiting_answer"; attempt: number; question: string; suggestions?: string[]; since: string }
  | { state: "merged"; attempt: number; commit: string }
  | { state: "in_review"; attempt: number; number: number; url: string; branch: string; head: string; tree: string; fork: string }
  | { state: "blocked"; reason: string; fix?: string };

export type PacketState = PacketStatus["state"];

export interface PacketRecord {
  id: string;
  /** The version (sha256 of the file) the current state refers to. */
  sha256: string | undefined;
  status: PacketStatus;
  /** Attempts spent on the current version (interrupted and refunded ones do not count). */
  attemptsUsed: number;
  /** The highest attempt number ever started: run directories are never reused. */
  lastAttempt: number;
  /** Granted by `factory unblock`. */
  extraAttempts: number;
  /** Everything this packet has cost, across versions. */
  costUsd: number;
  /** Why the packet is where it is: the last decision's reasons, a block, a rejection. */
  reason: string | undefined;
  /** The packet file changed after it merged; the change is not run. */
  changedSinceMerge: boolean;
  /** Gated work that could not land yet (a dirty checkout): the next run lands it without a new attempt. */
  pendingLand: { attempt: number; commit: string; fork: string } | undefined;
  /** What the next attempt's prompt is told: the last decision's or rejection's feedback. */
  feedback: string[];
  /** The feedback before that (the attempt before the last), also told, after the newest. */
  earlierFeedback: string[];
  /** The last attempt's work a retry may continue (`[limits] retry_from = "last"`). */
  lastWork: { attempt: number; commit: string; from: string } | undefined;
  /** Failure fingerprints of the current version's failed attempts, oldest first. */
  fingerprints: string[];
  /** The current version's questions to a person, oldest first, with the answers given (the next attempts' briefs carry them). */
  questions: { attempt: number; question: string; answer?: string; by?: string; at?: string }[];
  /** What of the user's own the tripwire saw change while its last attempt ran (the run carried on). */
  outsideSeen?: { attempt: number; changes: string[] };
  /** The newest `factory assess` ruling, on the version it names (current only while `sha256` is the packet's). */
  assessment?: { sha256: string; ruling: string; tier: string; at: string; findings: number };
  /** The newest mutation check of a landed version: mutants made of its changed lines, and how many its tests killed. */
  mutants?: { commit: string; made: number; killed: number; reason?: string };
  /** A landing of it a person said is gone from the target on purpose (`factory acknowledge`): its commit, and who. */
  goneAcknowledged?: { commit: string; by: string };
}

/** A packet's record with every event the ledger holds for it, in order (a full read; see Ledger.history). */
export interface PacketHistory extends PacketRecord {
  events: LedgerEvent[];
}

export interface RunRecord {
  run: string;
  pid: number;
  host: string;
  startedAt: string;
  ended?: { at: string; outcome: string; reason?: string };
  costUsd: number;
  /** The shared remote this run cannot reach now, since when and why (it waits, spending nothing). */
  remoteDown?: { remote: string; since: string; reason: string };
  /** Whole-tree gates red at its start that queued packets repair: the packets waiting for those to land. */
  repairsFirst?: { surface: string; gates: string[]; repairers: string[]; waiting: string[] }[];
}

/** A test found flaky at the tip and not yet seen steady again, keyed by `flakyKey(gate, test)`. */
export interface KnownFlaky {
  gate: string;
  test: string;
  /** The packet whose gating found it, and when. */
  packet: string;
  at: string;
  /** The tip's runs that did not pass, of how many. */
  failed: number;
  runs: number;
}

export function flakyKey(gate: string, test: string): string {
  return `${gate}\u0000${test}`;
}

export interface LedgerState<R extends PacketRecord = PacketRecord> {
  packets: Map<string, R>;
  /** Tests flaky at the tip, remembered for the next packets until a rerun finds them steady. */
  flaky: Record<string, KnownFlaky>;
  /** By run id, in the order they started. */
  runs: Map<string, RunRecord>;
  costUsd: number;
  /** Paid calls that belong to no packet (model probes, canaries, the planner), in order: only in a full read (`history`). */
  spent?: { ts: string; for: string; usd: number }[];
  /** Agent calls started and not finished, by call id: each holds its reservation (every worker's, on a shared ledger). */
  openCalls: Record<string, OpenCall>;
  /** What was spent (and what lost calls were charged), by the UTC hour it was recorded in ("2026-12-07T06"): the fleet's spend over a window. */
  spentByHour: Record<string, number>;
  /** While the fleet is paused (`factory pause`): who paused it, when, and whether running attempts were stopped too. */
  paused?: { by: string; at: string; interrupt: boolean };
  /** Agent calls recorded per tier, and what they cost: the averages a forecast of the queue uses. */
  tierCosts: Record<string, { calls: number; usd: number }>;
}

/** An agent call in flight (or lost with its worker): what it reserved. */
export interface OpenCall {
  packet: string;
  attempt: number;
  tier: string;
  run: string;
  reservedUsd: number;
  since: string;
}

/** Pure: the hour bucket of a timestamp. */
export function hourOf(ts: string): string {
  return ts.slice(0, 13);
}

/** A packet the ledger has no event for: queued, nothing spent. */
export function emptyRecord(id: string): PacketRecord {
  return {
    id,
    sha256: undefined,
    status: { state: "queued" },
    attemptsUsed: 0,
    lastAttempt: 0,
    extraAttempts: 0,
    costUsd: 0,
    reason: undefined,
    changedSinceMerge: false,
    pendingLand: undefined,
    feedback: [],
    earlierFeedback: [],
    lastWork: undefined,
    fingerprints: [],
    questions: [],
  };
}

export function emptyState(): LedgerState {
  return { packets: new Map(), runs: new Map(), costUsd: 0, flaky: {}, openCalls: {}, spentByHour: {}, tierCosts: {} };
}

/** Pure: the current state of every packet and run, with each packet's events, from the ledger's events in order. */
export function foldLedger(events: readonly LedgerEvent[]): LedgerState<PacketHistory> {
  return foldInto(emptyState(), events, true) as LedgerState<PacketHistory>;
}

/**
 * Folds `events` into `state` (changed in place) and returns it: the fold
 * goes on from a snapshot exactly as if it had started at the beginning.
 * With `history`, each packet's record also collects its events.
 */
export function foldInto(state: LedgerState, events: readonly LedgerEvent[], history = false): LedgerState {
  const { packets } = state;
  const folding: Folding = {
    state,
    history,
    record(id: string): PacketRecord {
      let found = packets.get(id);
      if (!found) {
        found = history ? ({ ...emptyRecord(id), events: [] } as PacketHistory) : emptyRecord(id);
        packets.set(id, found);
      }
      return found;
    },
    charge(ts: string, usd: number): void {
      if (usd > 0) state.spentByHour[hourOf(ts)] = (state.spentByHour[hourOf(ts)] ?? 0) + usd;
    },
  };
  for (const event of events) {
    const packetId = history ? eventPacket(event) : undefined;
    if (packetId !== undefined) (folding.record(packetId) as PacketHistory).events.push(event);
    if (isOneOf(FLEET_KINDS, event)) foldFleet(folding, event);
    else if (isOneOf(ATTEMPT_KINDS, event)) foldAttempt(folding, event);
    else foldOutcome(folding, event);
  }
  return state;
}

/** The state a fold writes into, and its two helpers. */
interface Folding {
  state: LedgerState;
  history: boolean;
  /** A packet's record, made on its first event. */
  record(id: string): PacketRecord;
  /** Counts a spend in its hour. */
  charge(ts: string, usd: number): void;
}

type Kind = LedgerEvent["kind"];
type Of<K extends Kind> = Extract<LedgerEvent, { kind: K }>;

function isOneOf<K extends Kind>(kinds: ReadonlySet<K>, event: LedgerEvent): event is Of<K> {
  return kinds.has(event.kind as K);
}

/** Runs, money, the pause and the flaky tests: the fleet's own events. */
const FLEET_KINDS = new Set([
  "run-started",
  "run-ended",
  "remote-unreachable",
  "remote-reachable",
  "repairs-first",
  "run-lock-taken-over",
  "ledger-restarted",
  "batch-gated",
  "spent",
  "agent-started",
  "agent-finished",
  "paused",
  "resumed",
  "flaky-found",
  "flaky-steady",
] as const satisfies readonly Kind[]);

/** A packet's versions, claims and attempt counts, and the facts recorded about it. */
const ATTEMPT_KINDS = new Set([
  "packet-registered",
  "claimed",
  "attempt-interrupted",
  "unblocked",
  "reset",
  "mutants-measured",
  "assessed",
  "outside-change-seen",
  "landing-gone-acknowledged",
] as const satisfies readonly Kind[]);

type KindsOf<S> = S extends ReadonlySet<infer K> ? K : never;
type FleetEvent = Of<KindsOf<typeof FLEET_KINDS>>;
type AttemptEvent = Of<KindsOf<typeof ATTEMPT_KINDS>>;

function foldFleet(folding: Folding, event: FleetEvent): void {
  const { state } = folding;
  const { runs } = state;
  switch (event.kind) {
    case "run-started":
      runs.set(event.run, { run: event.run, pid: event.pid, host: event.host, startedAt: event.ts, costUsd: 0 });
      break;
    case "run-ended": {
      const run = runs.get(event.run);
      if (run) run.ended = { at: event.ts, outcome: event.outcome, ...(event.reason ? { reason: event.reason } : {}) };
      break;
    }
    case "remote-unreachable": {
      const run = runs.get(event.run);
      if (run) run.remoteDown = { remote: event.remote, since: event.since, reason: event.reason };
      break;
    }
    case "remote-reachable": {
      const run = runs.get(event.run);
      if (run) delete run.remoteDown;
      break;
    }
    case "repairs-first": {
      const run = runs.get(event.run);
      if (run) run.repairsFirst = [...(run.repairsFirst ?? []), { surface: event.surface, gates: event.gates, repairers: event.repairers, waiting: event.waiting }];
      break;
    }
    case "run-lock-taken-over":
    case "ledger-restarted":
    case "batch-gated":
      break;
    case "spent": {
      const cost = event.costUsd ?? event.estimatedUsd ?? 0;
      state.costUsd += cost;
      folding.charge(event.ts, cost);
      if (folding.history) {
        const spent = state.spent ?? [];
        spent.push({ ts: event.ts, for: event.for, usd: cost });
        state.spent = spent;
      }
      const run = event.run ? runs.get(event.run) : undefined;
      if (run) run.costUsd += cost;
      break;
    }
    case "agent-started":
      state.openCalls[event.call] = { packet: event.packet, attempt: event.attempt, tier: event.tier, run: event.run, reservedUsd: event.reservedUsd, since: event.ts };
      break;
    case "agent-finished": {
      const cost = event.costUsd ?? event.estimatedUsd ?? 0;
      if (event.call) delete state.openCalls[event.call];
      if (event.tier && event.outcome !== "rate-limited") {
        const tier = state.tierCosts[event.tier] ?? { calls: 0, usd: 0 };
        state.tierCosts[event.tier] = { calls: tier.calls + 1, usd: tier.usd + cost };
      }
      folding.record(event.packet).costUsd += cost;
      state.costUsd += cost;
      folding.charge(event.ts, cost);
      const running = folding.record(event.packet).status;
      if (running.state === "running") {
        const run = runs.get(running.owner.run);
        if (run) run.costUsd += cost;
      }
      break;
    }
    case "paused":
      state.paused = { by: event.by, at: event.ts, interrupt: event.interrupt };
      break;
    case "resumed":
      delete state.paused;
      break;
    case "flaky-found":
      state.flaky[flakyKey(event.gate, event.test)] = {
        gate: event.gate,
        test: event.test,
        packet: event.packet,
        at: event.ts,
        failed: event.tipRuns.filter((outcome) => outcome !== "passed").length,
        runs: event.tipRuns.length,
      };
      break;
    case "flaky-steady":
      delete state.flaky[flakyKey(event.gate, event.test)];
      break;
    default:
      unreachable(event);
  }
}

/** Nothing ruled on a version counts for the next: its attempts, feedback, work, fingerprints and questions go. */
function forgetVersion(packet: PacketRecord): void {
  packet.status = { state: "queued" };
  packet.attemptsUsed = 0;
  packet.extraAttempts = 0;
  packet.pendingLand = undefined;
  packet.feedback = [];
  packet.earlierFeedback = [];
  packet.lastWork = undefined;
  packet.fingerprints = [];
  packet.questions = [];
}

function foldAttempt(folding: Folding, event: AttemptEvent): void {
  const { state } = folding;
  const packet = folding.record(event.packet);
  switch (event.kind) {
    case "packet-registered":
      if (packet.sha256 !== undefined && packet.sha256 !== event.sha256) {
        if (packet.status.state === "merged") {
          packet.changedSinceMerge = true;
        } else {
          forgetVersion(packet);
          packet.reason = "the packet file changed; earlier attempts were on an older version";
        }
      }
      if (packet.status.state !== "merged") packet.sha256 = event.sha256;
      break;
    case "claimed":
      packet.status = { state: "running", attempt: event.attempt, owner: { run: event.run, pid: event.pid, host: event.host }, since: event.ts };
      packet.attemptsUsed += 1;
      packet.lastAttempt = Math.max(packet.lastAttempt, event.attempt);
      packet.sha256 = event.sha256;
      packet.pendingLand = undefined;
      delete packet.outsideSeen;
      break;
    case "attempt-interrupted":
      // A call of the attempt that never finished (its worker killed, its lease run out) cost what it reserved.
      for (const [call, open] of Object.entries(state.openCalls)) {
        if (open.packet !== event.packet || open.attempt !== event.attempt) continue;
        delete state.openCalls[call];
        packet.costUsd += open.reservedUsd;
        state.costUsd += open.reservedUsd;
        folding.charge(event.ts, open.reservedUsd);
        const run = state.runs.get(open.run);
        if (run) run.costUsd += open.reservedUsd;
      }
      packet.status = { state: "queued" };
      packet.attemptsUsed = Math.max(0, packet.attemptsUsed - 1);
      packet.reason = `attempt ${event.attempt} was interrupted: ${event.reason}`;
      break;
    case "unblocked":
      packet.status = { state: "queued" };
      packet.extraAttempts += event.extraAttempts;
      packet.reason = `unblocked by ${event.by} with ${event.extraAttempts} more attempt(s)`;
      break;
    case "reset":
      forgetVersion(packet);
      packet.changedSinceMerge = false;
      packet.reason = `reset by ${event.by}`;
      break;
    case "mutants-measured":
      packet.mutants = { commit: event.commit, made: event.made, killed: event.killed, ...(event.reason ? { reason: event.reason } : {}) };
      break;
    case "assessed":
      packet.assessment = { sha256: event.sha256, ruling: event.ruling, tier: event.tier, at: event.ts, findings: event.findings.length };
      break;
    case "outside-change-seen": {
      const earlier = packet.outsideSeen?.attempt === event.attempt ? packet.outsideSeen.changes : [];
      packet.outsideSeen = { attempt: event.attempt, changes: [...earlier, ...event.changes] };
      break;
    }
    case "landing-gone-acknowledged":
      packet.goneAcknowledged = { commit: event.commit, by: event.by };
      break;
    default:
      unreachable(event);
  }
}

/** What an attempt came to, and what a person said about it. */
function foldOutcome(folding: Folding, event: Exclude<LedgerEvent, FleetEvent | AttemptEvent>): void {
  switch (event.kind) {
    case "baseline-measured":
    case "continued":
    case "planted":
    case "gate-finished":
    case "review-recorded":
    case "implementer-reported":
      return;
    case "decided": {
      const packet = folding.record(event.packet);
      packet.reason = event.reasons.join("; ") || undefined;
      if (event.feedback?.length) {
        if (packet.feedback.length) packet.earlierFeedback = packet.feedback;
        packet.feedback = event.feedback;
      }
      packet.lastWork = event.decision === "retry" && event.work ? { attempt: event.attempt, ...event.work } : undefined;
      if (event.fingerprint) packet.fingerprints.push(event.fingerprint);
      if (event.refund) packet.attemptsUsed = Math.max(0, packet.attemptsUsed - 1);
      if (event.decision === "retry") packet.status = { state: "queued" };
      return;
    }
    case "merge-blocked": {
      const packet = folding.record(event.packet);
      packet.status = { state: "queued" };
      packet.pendingLand = { attempt: event.attempt, commit: event.commit, fork: event.fork };
      packet.reason = `merge waits: ${event.reason}`;
      return;
    }
    case "merged": {
      const packet = folding.record(event.packet);
      packet.status = { state: "merged", attempt: event.attempt, commit: event.commit };
      packet.pendingLand = undefined;
      packet.reason = undefined;
      return;
    }
    case "held": {
      const packet = folding.record(event.packet);
      const { attempt, tree, branch, commit, fork } = event;
      packet.status = { state: "awaiting_human", attempt, tree, branch, commit, fork };
      packet.reason = `waiting for a person: factory approve ${event.packet}`;
      return;
    }
    case "pr-opened": {
      const packet = folding.record(event.packet);
      const { attempt, number, url, branch, head, tree, fork } = event;
      packet.status = { state: "in_review", attempt, number, url, branch, head, tree, fork };
      packet.reason = `in review: PR #${number} ${url}`;
      return;
    }
    case "asked": {
      const packet = folding.record(event.packet);
      const { attempt, question, suggestions } = event;
      packet.status = { state: "awaiting_answer", attempt, question, ...(suggestions?.length ? { suggestions } : {}), since: event.ts };
      packet.attemptsUsed = Math.max(0, packet.attemptsUsed - 1); // a question spends no attempt
      packet.questions.push({ attempt, question });
      packet.reason = `waiting for an answer: factory answer ${event.packet} "…"`;
      return;
    }
    case "answered": {
      const packet = folding.record(event.packet);
      const open = packet.questions.findLast((entry) => entry.attempt === event.attempt && entry.answer === undefined);
      if (open) Object.assign(open, { answer: event.answer, by: event.by, at: event.ts });
      if (packet.status.state === "awaiting_answer") packet.status = { state: "queued" };
      packet.reason = `answered by ${event.by}`;
      return;
    }
    case "approved":
      folding.record(event.packet).reason = `approved by ${event.by}`;
      return;
    case "rejected": {
      const packet = folding.record(event.packet);
      packet.status = { state: "queued" };
      if (packet.feedback.length) packet.earlierFeedback = packet.feedback;
      packet.feedback = [`A person rejected the last attempt: ${event.reason}`];
      packet.reason = `rejected by ${event.by}: ${event.reason}`;
      return;
    }
    case "blocked": {
      const packet = folding.record(event.packet);
      packet.status = { state: "blocked", reason: event.reason, ...(event.fix ? { fix: event.fix } : {}) };
      packet.reason = event.reason;
      return;
    }
    default:
      unreachable(event);
  }
}
