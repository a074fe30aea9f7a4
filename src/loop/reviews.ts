import type { ForgeConfig } from "../config/types.js";
import { ForgeError, forgeOf, type GitHub, type Permission } from "../forge/github.js";
import { fromWriters, judgePull, type PullVerdict, type Requirement } from "../forge/review-state.js";
import { fetchTarget } from "../git/remote.js";
import { gitTry, resolveCommit, treeOf } from "../git/repo.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import { type EventBody, stamp } from "../ledger/events.js";
import type { PacketRecord } from "../ledger/fold.js";
import { ClaimLost } from "../ledger/pg-claims.js";
import type { Packet } from "../packet/types.js";
import { claimWatch } from "./claim.js";
import { type RunContext, taskBranch, worktreePath } from "./context.js";
import { dropHeld } from "./held.js";
import { reportToIssue } from "./issue-report.js";

type InReview = Extract<PacketRecord["status"], { state: "in_review" }>;

/** What one look at the open pull requests found. */
export interface ReviewWatch {
  /** Something was recorded (merged, feedback for another attempt, blocked): the queue may move. */
  changed: boolean;
  /** PRs that will move by themselves (checks running, the forge not ready to merge, the forge unreachable): look again later. */
  waiting: string[];
  /** PRs that wait for a person to merge them. */
  person: string[];
  /** Why the waiting PRs wait, one line each (said once a run). */
  notes: string[];
  blocked: { id: string; reason: string }[];
  /** PRs this look recorded merged, with their merge commits: this worker's landings. */
  merged: { id: string; commit: string }[];
}

/**
 * Looks once at every packet in review (pull-request mode): a merged PR is
 * recorded `merged` (its merge commit on the remote), a closed one or one
 * whose head someone else pushed is blocked, a failed check or a requested
 * change becomes the next attempt's feedback (within max_attempts), and with
 * auto_merge a PR whose checks passed on the gated head is squash-merged,
 * guarded by that head. Each record is written only if the packet is still
 * in review on the same head (a read-then-append in one ledger transaction);
 * on PostgreSQL, only by the worker whose claim covers that look.
 */
export async function watchReviews(ctx: RunContext, packets: readonly Packet[]): Promise<ReviewWatch> {
  const watch: ReviewWatch = { changed: false, waiting: [], person: [], notes: [], blocked: [], merged: [] };
  const forgeConfig = ctx.config.forge;
  if (ctx.config.target.mode !== "pull-request" || !forgeConfig) return watch;
  const { state } = await ctx.ledger.read();
  const byId = new Map(packets.map((packet) => [packet.id, packet]));
  const forge = forgeOf(forgeConfig, process.env, ctx.signal);
  const pass = onePass(forge, forgeConfig, ctx.branch);
  for (const record of state.packets.values()) {
    if (record.status.state !== "in_review") continue;
    // On PostgreSQL one worker at a time looks at a PR (and merges it): the others leave it to that one.
    const watched = await claimWatch(ctx.ledger, record.id, record.status.head, ctx.claims);
    if (!watched.ok) {
      watch.waiting.push(record.id);
      watch.notes.push(`${record.id}: ${watched.reason}`);
      continue;
    }
    try {
      await watchOne(ctx, pass, record, byId.get(record.id), watch);
    } catch (error) {
      if (!(error instanceof ClaimLost)) throw error;
      ctx.emit({ kind: "notice", packet: record.id, message: error.message });
      watch.waiting.push(record.id);
    } finally {
      if (watched.fence !== undefined) await ctx.claims?.release(record.id);
    }
  }
  return watch;
}

/** What one look at the PRs asks the forge once, whatever the number of PRs: the requirement, each reviewer's permission. */
interface Pass {
  forge: GitHub;
  autoMerge: boolean;
  required(): Promise<Requirement>;
  permission(login: string): Promise<Permission>;
}

function onePass(forge: GitHub, config: ForgeConfig, branch: string): Pass {
  let required: Promise<Requirement> | undefined;
  const permissions = new Map<string, Promise<Permission>>();
  return {
    forge,
    autoMerge: config.autoMerge,
    required() {
      required ??= requirementOf(forge, config, branch);
      return required.catch((error: unknown) => {
        required = undefined; // an unreachable forge is asked again by the next PR
        throw error;
      });
    },
    permission(login) {
      const known = permissions.get(login) ?? forge.permission(login);
      permissions.set(login, known);
      return known;
    },
  };
}

/** The config's list when it has one (`[]`: no CI); else what the branch's protection and rulesets require; else unknown. */
async function requirementOf(forge: GitHub, config: ForgeConfig, branch: string): Promise<Requirement> {
  if (config.requiredChecks) return config.requiredChecks.length === 0 ? { kind: "none" } : { kind: "listed", checks: config.requiredChecks, from: "[forge] required_checks" };
  if (!config.autoMerge) return { kind: "unknown" }; // a person merges: what the forge requires is theirs to see
  const protection = await forge.protection(branch);
  if (protection.kind === "none" || protection.checks.length === 0) return { kind: "unknown" };
  return { kind: "listed", checks: protection.checks, from: `${branch}'s ${protection.from.join(" and ")}` };
}

async function watchOne(ctx: RunContext, pass: Pass, record: PacketRecord, packet: Packet | undefined, watch: ReviewWatch): Promise<void> {
  const status = record.status as InReview;
  let verdict: PullVerdict;
  try {
    verdict = await look(pass, status, watch, record.id);
    if (verdict.kind === "merge") verdict = await merge(ctx, pass, record.id, status, watch);
  } catch (error) {
    if (!(error instanceof ForgeError)) throw error;
    ctx.emit({ kind: "notice", packet: record.id, message: `PR #${status.number}: ${error.message}; looking again later (no attempt spent)` });
    watch.waiting.push(record.id);
    return;
  }
  const events = await eventsFor(ctx, record, packet, verdict);
  if (events.length === 0) {
    if (verdict.kind === "person") watch.person.push(`${record.id}: ${verdict.why}`);
    else watch.waiting.push(record.id);
    if (verdict.kind === "wait") watch.notes.push(`${record.id}: ${verdict.why}`);
    return;
  }
  const written = await ctx.ledger.transaction(async (tx) => {
    const now = (await tx.read()).state.packets.get(record.id)?.status;
    if (now?.state !== "in_review" || now.head !== status.head) return false;
    await tx.append(events.map((event) => stamp(event)));
    return true;
  });
  if (!written) return;
  watch.changed = true;
  const blocked = events.find((event) => event.kind === "blocked");
  if (blocked?.kind === "blocked") watch.blocked.push({ id: record.id, reason: blocked.reason });
  if (verdict.kind === "merged") {
    await removeWorktree(ctx.root, worktreePath(ctx.root, record.id));
    await deleteBranch(ctx.root, taskBranch(record.id));
    await dropHeld(ctx.root, record.id, ctx.config.target.remote);
  }
  const outcome = verdict.kind === "merged" ? "merged" : blocked ? "blocked" : verdict.kind === "behind" ? "re-gate" : "retry";
  const waits = events.find((event) => event.kind === "merge-blocked");
  const said = blocked?.kind === "blocked" ? blocked.reason : waits?.kind === "merge-blocked" ? waits.reason : undefined;
  ctx.emit({ kind: "outcome", packet: record.id, attempt: status.attempt, outcome, reasons: outcomeReasons(status, verdict, said) });
  const merged = events.find((event) => event.kind === "merged");
  if (merged?.kind === "merged") watch.merged.push({ id: record.id, commit: merged.commit });
  if (merged?.kind === "merged" && packet) await reportToIssue(ctx, packet, status.attempt, merged.commit);
}

async function look(pass: Pass, status: InReview, watch: ReviewWatch, id: string, autoMerge = pass.autoMerge): Promise<PullVerdict> {
  const { forge } = pass;
  const pull = await forge.pull(status.number);
  const { head, fork } = status;
  const none = { checks: [], statuses: [], reviews: [], comments: [], required: { kind: "none" } } as const;
  if (pull.merged || pull.state === "closed" || pull.head.sha !== head) return judgePull({ pull, head, fork, ...none, autoMerge });
  const [checks, statuses, reviews, comments, required] = await Promise.all([
    forge.checkRuns(head),
    forge.statuses(head),
    forge.reviews(status.number),
    forge.reviewComments(status.number),
    pass.required(),
  ]);
  const logins = [...new Set([...reviews, ...comments].map((entry) => entry.user?.login).filter((login): login is string => login !== undefined))];
  const permissions = await Promise.all(logins.map(async (login) => [login, await pass.permission(login)] as const));
  const writers = new Set(permissions.filter(([, permission]) => permission === "admin" || permission === "write").map(([login]) => login));
  const trusted = fromWriters(reviews, comments, writers);
  if (trusted.ignored.length > 0) watch.notes.push(`${id}: PR #${status.number}: left out the reviews of ${trusted.ignored.join(", ")}, who may not write to ${pass.forge.repo}`);
  return judgePull({ pull, head, fork, checks, statuses, reviews: trusted.reviews, comments: trusted.comments, autoMerge, required });
}

/** auto_merge: squash, guarded by the gated head; a 405 (not mergeable yet) waits, a 409 (the head moved) reads the PR again. */
async function merge(ctx: RunContext, pass: Pass, id: string, status: InReview, watch: ReviewWatch): Promise<PullVerdict> {
  const { forge } = pass;
  const message = (await gitMessage(ctx.root, status.head)) ?? `${id}\n`;
  const [title = id, ...rest] = message.split("\n");
  const answer = await forge.merge(status.number, { sha: status.head, title, message: rest.join("\n").trim() });
  if (answer.kind === "merged") return { kind: "merged", commit: answer.sha };
  if (answer.kind === "not-mergeable") return { kind: "wait", why: `the forge will not merge PR #${status.number} yet: ${answer.message}` };
  if (answer.kind === "merging") return { kind: "wait", why: answer.message };
  ctx.emit({ kind: "notice", packet: id, message: `PR #${status.number}: the forge refused the merge because the head moved (${answer.message}); reading the PR again` });
  return look(pass, status, watch, id, false).then((again) => (again.kind === "person" ? { kind: "wait", why: "read again after a 409" } : again));
}

async function gitMessage(root: string, commit: string): Promise<string | undefined> {
  const shown = await gitTry(root, ["log", "-1", "--format=%B", commit]);
  return shown.ok ? shown.out : undefined;
}

/** Pure but for reading the merge commit's tree: the events a verdict writes (none: nothing to record yet). */
async function eventsFor(ctx: RunContext, record: PacketRecord, packet: Packet | undefined, verdict: PullVerdict): Promise<EventBody[]> {
  const status = record.status as InReview;
  const { attempt, number } = status;
  switch (verdict.kind) {
    case "merged": {
      // The remote is the authority: its branch has the merge commit (fetched), whose tree is what landed.
      const remote = ctx.config.target.remote;
      if (remote) await fetchTarget(ctx.root, remote, ctx.branch);
      const known = verdict.commit && (await resolveCommit(ctx.root, verdict.commit));
      const tree = known ? await treeOf(ctx.root, verdict.commit) : status.tree;
      return [{ kind: "merged", packet: record.id, attempt, commit: verdict.commit || status.head, tree }];
    }
    case "closed":
      return [
        { kind: "blocked", packet: record.id, attempt, reason: `PR #${number} was closed without merging (${status.url})`, fix: `reopen the PR, or factory reset ${record.id} to start it again` },
      ];
    case "head-moved":
      return [
        {
          kind: "blocked",
          packet: record.id,
          attempt,
          reason: `PR #${number}'s branch ${status.branch} was pushed by someone other than the factory (its head is ${verdict.sha.slice(0, 10)}, the factory gated ${status.head.slice(0, 10)}): that head was never gated`,
          fix: `close the PR and factory reset ${record.id}, or put ${status.branch} back at ${status.head.slice(0, 10)}`,
        },
      ];
    case "feedback": {
      const allowed = (packet?.maxAttempts ?? 0) + record.extraAttempts;
      const reason = `the forge sent PR #${number} back: ${verdict.lines[0]?.split("\n")[0] ?? "changes asked for"}`;
      if (record.attemptsUsed >= allowed) {
        return [
          { kind: "decided", packet: record.id, attempt, decision: "block", reasons: [reason], feedback: verdict.lines },
          { kind: "blocked", packet: record.id, attempt, reason: `out of attempts (${record.attemptsUsed}/${allowed}): ${reason}; factory unblock ${record.id} gives it more` },
        ];
      }
      return [{ kind: "decided", packet: record.id, attempt, decision: "retry", reasons: [reason], feedback: verdict.lines }];
    }
    case "behind":
      // Waits to land again, unspent: the next pick brings it up to the new base, re-gates it and pushes the new head to the same PR.
      return [
        {
          kind: "merge-blocked",
          packet: record.id,
          attempt,
          reason: `PR #${number}'s base ${ctx.branch} moved to ${verdict.base.slice(0, 10)} since it was gated; it is brought up to date and gated again`,
          commit: status.head,
          fork: status.fork,
        },
      ];
    case "wait":
    case "person":
    case "merge":
      return [];
  }
}

function outcomeReasons(status: InReview, verdict: PullVerdict, said: string | undefined): string[] {
  if (said) return [said];
  if (verdict.kind === "merged") return [`PR #${status.number} merged @ ${verdict.commit.slice(0, 10)}`];
  if (verdict.kind === "feedback") return verdict.lines.map((line) => line.split("\n")[0] ?? line);
  return [];
}
