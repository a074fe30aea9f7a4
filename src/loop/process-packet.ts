import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { commonGitDir } from "../git/dirs.js";
import { resolveCommit, treeOf } from "../git/repo.js";
import { landedCacheFile, landedIndex, landedPackets } from "../git/trailers.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import type { EventBody } from "../ledger/events.js";
import type { PacketRecord } from "../ledger/fold.js";
import { ClaimLost } from "../ledger/pg-claims.js";
import { withLandLock } from "../ledger/store.js";
import { type LandResult, land, remotePatience } from "../merge/land.js";
import { type Flight, landingQueue } from "../merge/landing-queue.js";
import { syncPatiently } from "../merge/target-sync.js";
import type { Packet } from "../packet/types.js";
import { crashPoint } from "../util/crash-point.js";
import { lowSpace, resourceFault, resourceLine } from "../util/resources.js";
import { type AttemptReport, runAttempt } from "./attempt.js";
import { BudgetExhausted } from "./budget.js";
import { claimLanding, claimPacket } from "./claim.js";
import { noticeNewerConfig } from "./config-drift.js";
import { attemptDir, Interrupted, Paused, type RunContext, taskBranch, worktreePath } from "./context.js";
import { type AttemptDecision, type AttemptEnd, continuable, decide } from "./decide.js";
import { filledByAttempt } from "./disk-filled.js";
import { dropHeld, keepHeldAttempt } from "./held.js";
import { reportToIssue } from "./issue-report.js";
import { recordedAttempt } from "./recorded-attempt.js";
import { removedReason, removedUnder } from "./worktree-removed.js";

export type PacketOutcome =
  | { kind: "merged"; commit: string }
  | { kind: "held" }
  /** The implementer asked a person a question: the packet waits for `factory answer`, no attempt spent. */
  | { kind: "asked"; question: string; suggestions: string[] }
  | { kind: "in-review"; number: number; url: string }
  | { kind: "retry"; environment: boolean; rateLimited?: { role: "implementer" | "reviewer"; resetsAt?: string } }
  /** packetFault: the packet file is at fault (defective, or its spec moved), not the machine or the work. */
  | {
      kind: "blocked";
      reason: string;
      packetFault: boolean;
      /** The factory's own verdict was contradicted: the queue stops even with --keep-going. */
      alarm?: true;
      /** Its last call reported a rate limit further away than rate_limit_wait: the agent's other packets wait for a later run. */
      rateLimited?: { role: "implementer" | "reviewer"; resetsAt?: string };
    }
  | { kind: "merge-blocked"; reason: string }
  | { kind: "not-claimed"; reason: string }
  | { kind: "interrupted"; reason: string };

/** One attempt of one packet, and everything that follows from it, recorded in the ledger. */
export async function processPacket(ctx: RunContext, packet: Packet, record: PacketRecord | undefined): Promise<PacketOutcome> {
  const flight = landingQueue(ctx).begin(); // landings that would re-gate wait a little for attempts in flight (merge/landing-queue.ts)
  try {
    return await attemptPacket(ctx, packet, record, flight);
  } catch (error) {
    // Another worker took the packet over (this one's lease ran out): nothing more is written for it here.
    if (!(error instanceof ClaimLost)) throw error;
    ctx.emit({ kind: "notice", packet: packet.id, message: error.message });
    return { kind: "not-claimed", reason: error.message };
  } finally {
    flight.end();
  }
}

async function attemptPacket(runCtx: RunContext, packet: Packet, record: PacketRecord | undefined, flight: Flight): Promise<PacketOutcome> {
  const claim = await claimPacket(runCtx.root, runCtx.ledger, packet, runCtx.owner, runCtx.claims);
  if (!claim.ok) return { kind: "not-claimed", reason: claim.reason };
  const { attempt } = claim;
  const ctx = claimedContext(runCtx, packet.id);
  const runDir = attemptDir(ctx.root, packet.id, attempt);
  // With a shared remote, each attempt starts from what the remote holds now (other workers land there).
  const remote = ctx.config.target.remote;
  const synced = remote ? await syncPatiently(ctx.root, remote, ctx.branch, remotePatience(ctx, packet.id)) : undefined;
  if (synced && !synced.ok) {
    await ctx.ledger.append([{ kind: "attempt-interrupted", packet: packet.id, attempt, reason: synced.reason }]);
    return { kind: "interrupted", reason: synced.reason };
  }
  const tip = await resolveCommit(ctx.root, ctx.branch);
  if (!tip) throw new Error(`the target branch ${ctx.branch} has no commits`);
  await noticeNewerConfig(ctx, tip);
  // A worker that pushed this version and died before recording it (its claim then ran out, and this worker took
  // it) left the landing on the target, after this run's start-up reconcile looked: its trailer is the record.
  const landedBefore = landedIndex(await landedPackets(ctx.root, tip, { cacheFile: landedCacheFile(ctx.root) }))(packet.id, packet.sha256);
  if (landedBefore) {
    await ctx.ledger.append([{ kind: "merged", packet: packet.id, attempt, commit: landedBefore.commit, tree: await treeOf(ctx.root, landedBefore.commit) }]);
    ctx.emit({
      kind: "notice",
      packet: packet.id,
      message: `already landed on ${ctx.branch} as ${landedBefore.commit.slice(0, 12)} (its Factory-Packet trailer), by a run that stopped before recording it: recorded as merged, no agent called`,
    });
    return { kind: "merged", commit: landedBefore.commit };
  }
  const sameVersion = record?.sha256 === packet.sha256;
  const attemptsBefore = sameVersion ? (record?.attemptsUsed ?? 0) : 0;
  const maxAttempts = packet.maxAttempts + (sameVersion ? (record?.extraAttempts ?? 0) : 0);

  let report: AttemptReport;
  try {
    const lastWork = sameVersion && ctx.config.limits.retryFrom === "last" ? record?.lastWork : undefined;
    const answers = sameVersion ? answersOf(record) : [];
    report = await runAttempt(ctx, {
      packet,
      attempt,
      tip,
      feedback: sameVersion && record ? feedbackFor(record) : [],
      ...(answers.length ? { answers } : {}),
      runDir,
      ...(lastWork ? { continueFrom: lastWork } : {}),
    });
  } catch (error) {
    return attemptStopped(ctx, { packet, attempt, runDir }, error);
  }

  const earlierFingerprints = sameVersion ? record?.fingerprints : undefined;
  const asked = sameVersion ? (record?.questions.length ?? 0) : 0;
  if (report.end.kind === "implementer-question" && asked < ctx.config.limits.maxQuestions) return askPerson(ctx, packet, attempt, report.end);
  // A gate that saw what only a person may rule on (a workflow edit, a rewrite of a repaired gate) holds the packet for one.
  const forPerson = (report.gates ?? []).flatMap((gate) => (gate.forPerson ? [gate.forPerson] : []));
  const decided = decide({ end: report.end, attemptsUsed: attemptsBefore + 1, maxAttempts, gate: forPerson.length > 0 ? "human" : packet.gate, earlierFingerprints });
  const decision = decided.decision === "hold" && forPerson.length > 0 ? { ...decided, reasons: [...decided.reasons, ...forPerson] } : decided;
  // Whatever failed, with a disk full under it, failed for the machine: the agent's write, a gate's report, git.
  if (decision.decision !== "merge" && decision.decision !== "hold") {
    const low = lowSpace([worktreePath(ctx.root, packet.id), runDir, ctx.root]);
    if (low) {
      const filled = await filledByAttempt(ctx, packet.id, runDir);
      if (filled) return recordBlock(ctx, packet, attempt, filled);
      return stoppedByMachine(ctx, packet.id, attempt, `no space left: ${low}`);
    }
  }
  writeFileSync(join(runDir, "decision.json"), JSON.stringify({ end: report.end, decision }, null, 2));
  if (decision.decision !== "merge") return applyDecision(ctx, { packet, attempt, decision, report, carry: continuable(report.end, report.gates) });
  const { commit, gates } = report;
  if (!commit || !gates) throw new Error("an attempt decided for merge has a gated commit");
  // One landing at a time (approve, reject and other runs wait): the target moves and the ledger records it together.
  // Attempts of this run waiting to land at the same time are gated together first (a merge batch).
  return landingQueue(ctx).land(
    {
      packet,
      attempt,
      commit,
      fork: report.forkCommit,
      runDir,
      planted: report.planting?.files ?? [],
      plantedCases: report.planting?.cases ?? {},
      plantedCommit: report.planting?.commit ?? report.forkCommit,
      provenance: { attempt, gates, counts: report.end.kind === "reviewed" ? report.end.counts : undefined, ...(sameVersion && answersOf(record).length ? { answers: answersOf(record) } : {}) },
      ...(report.tests ? { tests: report.tests } : {}),
    },
    (landed) => applyLanding(ctx, { packet, attempt, landed, report, attemptsUsed: attemptsBefore + 1, maxAttempts, earlierFingerprints }),
    flight,
  );
}

/**
 * An attempt that threw before it ended: the machine ran out (a disk the attempt itself filled blocks it), the
 * claim was lost (nothing more is written), or it was interrupted, over budget or broken: recorded as
 * interrupted, not spent; anything but an interrupt or the budget is thrown on.
 */
async function attemptStopped(ctx: RunContext, at: { packet: Packet; attempt: number; runDir: string }, error: unknown): Promise<PacketOutcome> {
  const { packet, attempt, runDir } = at;
  const fault = resourceFault(error);
  if (fault) {
    const filled = await filledByAttempt(ctx, packet.id, runDir);
    if (filled) return recordBlock(ctx, packet, attempt, filled);
    // Named by the filesystem that is full (the worktrees', the checkout's, or the repository's object store) and by git's own line.
    const objects = join(await commonGitDir(ctx.root).catch(() => join(ctx.root, ".git")), "objects");
    const low = lowSpace([worktreePath(ctx.root, packet.id), runDir, ctx.root, objects]);
    const line = resourceLine(error);
    return stoppedByMachine(ctx, packet.id, attempt, `${fault}${low && !line.includes(low) ? `: ${low}` : ""} (${line})`);
  }
  if (ctx.claims?.lost(packet.id)) throw ctx.signal.reason instanceof ClaimLost ? ctx.signal.reason : new ClaimLost(packet.id, "its lease ran out");
  const worktree = worktreePath(ctx.root, packet.id);
  if (!(error instanceof Interrupted) && (await removedUnder(ctx.root, worktree, error))) return stoppedUnspent(ctx, packet.id, attempt, removedReason(worktree, attempt));
  const reason =
    error instanceof Interrupted
      ? ctx.signal.reason instanceof Paused
        ? `${ctx.signal.reason.message} (factory pause --interrupt)`
        : "the run was interrupted"
      : error instanceof BudgetExhausted
        ? error.message
        : `internal error: ${error instanceof Error ? error.message : String(error)}`;
  await ctx.ledger.append([{ kind: "attempt-interrupted", packet: packet.id, attempt, reason, worktree: worktreePath(ctx.root, packet.id) }]);
  if (error instanceof Interrupted || error instanceof BudgetExhausted) return { kind: "interrupted", reason };
  throw error;
}

/** The implementer's question, recorded for a person: the packet waits for `factory answer`; the queue goes on. */
async function askPerson(ctx: RunContext, packet: Packet, attempt: number, end: { question: string; suggestions: string[] }): Promise<PacketOutcome> {
  const { question, suggestions } = end;
  await ctx.ledger.append([{ kind: "asked", packet: packet.id, attempt, sha256: packet.sha256, question, ...(suggestions.length ? { suggestions } : {}) }]);
  ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "awaiting_answer", reasons: [`factory answer ${packet.id} "…" (no attempt spent)`] });
  return { kind: "asked", question, suggestions };
}

/**
 * A resource of the machine ran out (a disk full, a quota, open files,
 * memory): the attempt is recorded as interrupted (not spent; the next run
 * claims the packet again by itself) and the run stops, naming what ran out.
 */
async function stoppedByMachine(ctx: RunContext, packet: string, attempt: number, what: string): Promise<PacketOutcome> {
  return stoppedUnspent(ctx, packet, attempt, `the machine ran out: ${what}; free it, then \`factory run\` goes on (no attempt was spent)`);
}

/** The attempt recorded as interrupted (not spent; the next run claims the packet again), and the run stops for `reason`. */
async function stoppedUnspent(ctx: RunContext, packet: string, attempt: number, reason: string): Promise<PacketOutcome> {
  try {
    await ctx.ledger.append([{ kind: "attempt-interrupted", packet, attempt, reason, worktree: worktreePath(ctx.root, packet) }]);
  } catch {
    // the ledger's own disk may be the full one: the next run finds the attempt in flight and recovers it the same way
  }
  ctx.emit({ kind: "outcome", packet, attempt, outcome: "retry (attempt not counted)", reasons: [reason] });
  return { kind: "interrupted", reason };
}

/**
 * A block the factory decides outside an attempt's decision: an attempt that filled the disk itself (its
 * worktree already removed), or the landing's own check contradicting the verdict (`alarm`: the queue stops).
 */
async function recordBlock(ctx: RunContext, packet: Packet, attempt: number, reason: string, alarm = false): Promise<PacketOutcome> {
  await ctx.ledger.append([
    { kind: "decided", packet: packet.id, attempt, decision: "block", reasons: [reason] },
    { kind: "blocked", packet: packet.id, attempt, reason },
  ]);
  ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "blocked", reasons: [reason] });
  return { kind: "blocked", reason, packetFault: false, ...(alarm ? { alarm: true as const } : {}) };
}

interface Applied {
  packet: Packet;
  attempt: number;
  decision: AttemptDecision;
  report: AttemptReport;
  /** The attempt's gated work may be continued by a retry (see continuable). */
  carry?: boolean;
}

/** Pure: what an attempt's prompt is told: the last attempt's feedback, then the one before it. */
/** The current version's answered questions, oldest first. */
export function answersOf(record: Pick<PacketRecord, "questions"> | undefined): { question: string; answer: string; by: string; at?: string }[] {
  return (record?.questions ?? []).flatMap((entry) =>
    entry.answer === undefined ? [] : [{ question: entry.question, answer: entry.answer, by: entry.by ?? "a person", ...(entry.at ? { at: entry.at } : {}) }],
  );
}

export function feedbackFor(record: Pick<PacketRecord, "feedback" | "earlierFeedback">): string[] {
  return [...record.feedback, ...record.earlierFeedback.map((item) => `(two attempts ago) ${item}`)];
}

async function applyDecision(ctx: RunContext, input: Applied): Promise<PacketOutcome> {
  const { packet, attempt, decision, report } = input;
  const decided: EventBody = {
    kind: "decided",
    packet: packet.id,
    attempt,
    decision: decision.decision,
    reasons: decision.reasons,
    ...(decision.refund ? { refund: true } : {}),
    ...(decision.feedback.length ? { feedback: decision.feedback } : {}),
    ...(decision.fingerprint ? { fingerprint: decision.fingerprint } : {}),
    ...(decision.decision === "retry" && input.carry && report.commit ? { work: { commit: report.commit, from: report.planting?.commit ?? report.forkCommit } } : {}),
  };
  const end = report.end;
  const rateLimited = end.kind === "rate-limited" ? { role: end.role, ...(end.resetsAt ? { resetsAt: end.resetsAt } : {}) } : end.kind === "agent-failed" ? end.rateLimited : undefined;
  switch (decision.decision) {
    case "hold": {
      if (!report.commit) throw new Error("a held attempt has a gated commit");
      const tree = await treeOf(ctx.root, report.commit);
      await ctx.ledger.append([decided, { kind: "held", packet: packet.id, attempt, tree, branch: taskBranch(packet.id), commit: report.commit, fork: report.forkCommit }]);
      // Kept in git too: a lost ledger does not send reviewed work back to be done and paid for again.
      try {
        await keepHeldAttempt(ctx.root, ctx.ledger, packet, { attempt, commit: report.commit, fork: report.forkCommit, tree }, ctx.config.target.remote);
      } catch (error) {
        // The ledger has the hold; git's copy is a second record, whose failure stops nothing.
        ctx.emit({ kind: "notice", packet: packet.id, message: `the held attempt could not also be kept in git (${error instanceof Error ? error.message.split("\n")[0] : String(error)})` });
      }
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "awaiting_human", reasons: [...decision.reasons, `factory approve ${packet.id}`] });
      return { kind: "held" };
    }
    case "block": {
      const reason = decision.reasons.join("; ");
      const fix = decision.packetFault ? packetFix(packet) : undefined;
      await ctx.ledger.append([decided, { kind: "blocked", packet: packet.id, attempt, reason, ...(fix ? { fix } : {}) }]);
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "blocked", reasons: decision.reasons });
      return { kind: "blocked", reason, packetFault: fix !== undefined, ...(rateLimited ? { rateLimited } : {}) };
    }
    case "retry": {
      await ctx.ledger.append([decided]);
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: decision.refund ? "retry (attempt not counted)" : "retry", reasons: decision.reasons });
      return { kind: "retry", environment: decision.environment, ...(rateLimited ? { rateLimited } : {}) };
    }
    case "merge":
      throw new Error("merge is applied by applyLanding");
  }
}

/** Records how landing went: merged, waiting for a clean checkout, or back to an attempt's decision. */
export async function applyLanding(
  ctx: RunContext,
  input: { packet: Packet; attempt: number; landed: LandResult; report: AttemptReport; attemptsUsed: number; maxAttempts: number; earlierFingerprints?: readonly string[] | undefined },
): Promise<PacketOutcome> {
  const { packet, attempt, landed, report } = input;
  const decided: EventBody = { kind: "decided", packet: packet.id, attempt, decision: "merge", reasons: [] };
  crashPoint("after-land"); // the target moved (or did not), nothing recorded yet
  switch (landed.kind) {
    case "merged":
      await ctx.ledger.append([decided, { kind: "merged", packet: packet.id, attempt, commit: landed.commit, tree: landed.tree }]);
      await removeWorktree(ctx.root, worktreePath(ctx.root, packet.id));
      await deleteBranch(ctx.root, taskBranch(packet.id));
      await dropHeld(ctx.root, packet.id, ctx.config.target.remote);
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "merged", reasons: [`${ctx.branch} @ ${landed.commit.slice(0, 10)}`] });
      await reportToIssue(ctx, packet, attempt, landed.commit);
      return { kind: "merged", commit: landed.commit };
    case "in-review": {
      const { number, url, branch, head, tree, base } = landed;
      await ctx.ledger.append([decided, { kind: "pr-opened", packet: packet.id, attempt, number, url, branch, head, tree, fork: base }]);
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "in_review", reasons: [`PR #${number} ${url}`] });
      return { kind: "in-review", number, url };
    }
    case "merge-blocked":
      await ctx.ledger.append([
        decided,
        {
          kind: "merge-blocked",
          packet: packet.id,
          attempt,
          reason: landed.reason,
          commit: report.commit ?? report.forkCommit,
          fork: report.forkCommit,
        },
      ]);
      ctx.emit({ kind: "outcome", packet: packet.id, attempt, outcome: "merge-blocked", reasons: [landed.reason] });
      return { kind: "merge-blocked", reason: landed.reason };
    case "verdict-contradicted":
      // The factory's own failure: never a retry (the agent is not to blame), never a landing, and the queue stops however it was run.
      return recordBlock(ctx, packet, attempt, landed.reason, true);
    case "spec-drift": {
      const decision = decide({ end: { kind: "spec-drift", reason: landed.reason }, attemptsUsed: input.attemptsUsed, maxAttempts: input.maxAttempts, gate: packet.gate });
      return applyDecision(ctx, { packet, attempt, decision, report });
    }
    case "conflict":
    case "regate-failed":
    case "environment-error": {
      const end: AttemptEnd =
        landed.kind === "conflict"
          ? { kind: "merge-conflict", reason: landed.reason }
          : landed.kind === "regate-failed"
            ? { kind: "gates-red", reports: landed.reports }
            : { kind: "environment-error", reason: landed.reason };
      const decision = decide({ end, attemptsUsed: input.attemptsUsed, maxAttempts: input.maxAttempts, gate: packet.gate, earlierFingerprints: input.earlierFingerprints });
      return applyDecision(ctx, { packet, attempt, decision, report });
    }
  }
}

/** A lost claim stops the packet's agents and gates at once, as an interrupt stops the run's. */
function claimedContext(runCtx: RunContext, packet: string): RunContext {
  const lost = runCtx.claims?.signalOf(packet);
  return lost ? { ...runCtx, signal: AbortSignal.any([runCtx.signal, lost]), runContext: runCtx.runContext ?? runCtx } : runCtx;
}

/** Gated work that waited for a clean checkout: land it now, without a new attempt. */
export async function landPending(ctx: RunContext, packet: Packet, record: PacketRecord): Promise<PacketOutcome | undefined> {
  const pending = record.pendingLand;
  if (!pending) return undefined;
  // On PostgreSQL another worker may be landing it: one landing, under a fence of its own.
  const claim = await claimLanding(ctx.ledger, packet, ctx.claims);
  if (!claim.ok) return { kind: "not-claimed", reason: claim.reason };
  try {
    return await landClaimed(claimedContext(ctx, packet.id), packet, record, pending);
  } catch (error) {
    if (!(error instanceof ClaimLost)) throw error;
    ctx.emit({ kind: "notice", packet: packet.id, message: error.message });
    return { kind: "not-claimed", reason: error.message };
  }
}

async function landClaimed(ctx: RunContext, packet: Packet, record: PacketRecord, pending: NonNullable<PacketRecord["pendingLand"]>): Promise<PacketOutcome> {
  const history = (await ctx.ledger.history()).state.packets.get(packet.id);
  const { planted, gates, counts } = history ? recordedAttempt(history, pending.attempt) : { planted: undefined, gates: [], counts: undefined };
  return withLandLock(ctx.root, async () => {
    const landed = await land(ctx, {
      packet,
      attempt: pending.attempt,
      commit: pending.commit,
      fork: pending.fork,
      runDir: attemptDir(ctx.root, packet.id, pending.attempt),
      planted: planted?.files ?? [],
      plantedCases: planted?.cases ?? {},
      plantedCommit: planted?.commit ?? pending.fork,
      provenance: { attempt: pending.attempt, gates, counts, ...(answersOf(record).length ? { answers: answersOf(record) } : {}) },
    });
    const report: AttemptReport = { end: { kind: "environment-error", reason: "" }, forkCommit: pending.fork, commit: pending.commit, gates };
    return applyLanding(ctx, { packet, attempt: pending.attempt, landed, report, attemptsUsed: record.attemptsUsed, maxAttempts: packet.maxAttempts + record.extraAttempts });
  });
}

/** What to do about a packet that is at fault itself: more attempts or a reset would only meet the same fault. */
export function packetFix(packet: Pick<Packet, "file" | "id" | "planted">): string {
  const planted = packet.planted.length > 0 ? ` or its planted files under packets/supplied/${packet.id}/` : "";
  return `edit ${packet.file}${planted} and commit: a changed packet is a new version and runs afresh`;
}
