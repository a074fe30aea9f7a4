import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import type { Config } from "../config/types.js";
import { diffStat, diffText } from "../git/diff.js";
import { fetchHeld } from "../git/held-refs.js";
import { clearLeftWorktreeLock } from "../git/locks.js";
import { projectOf } from "../git/project.js";
import { resolveCommit } from "../git/repo.js";
import { landedCacheFile, landedPackets, landedVersion } from "../git/trailers.js";
import { resetWorktreeTo } from "../git/worktree.js";
import type { PacketHistory, PacketRecord } from "../ledger/fold.js";
import { isPgLedger } from "../ledger/open.js";
import { startWorkerClaims, type WorkerClaims } from "../ledger/pg-claims.js";
import { OtherProjectError } from "../ledger/project.js";
import { withLandLock } from "../ledger/store.js";
import { createProgress } from "../log/progress.js";
import { Budget } from "../loop/budget.js";
import { claimHeld } from "../loop/claim.js";
import { attemptDir, Interrupted, type RunContext, taskBranch, worktreePath } from "../loop/context.js";
import { Notifier } from "../loop/notify.js";
import { answersOf, applyLanding } from "../loop/process-packet.js";
import { AgentWaits } from "../loop/rate-limits.js";
import { recordLandedVersions } from "../loop/reconcile.js";
import { recordedAttempt } from "../loop/recorded-attempt.js";
import { checkSpecDrift } from "../loop/spec-drift.js";
import { finishLeftCheckout } from "../merge/checkout.js";
import { land } from "../merge/land.js";
import { syncWithRemote } from "../merge/target-sync.js";
import type { Packet } from "../packet/types.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";
import { implementerClaims } from "./report.js";
import { loadHead, type Workspace } from "./workspace.js";

export interface ApproveOptions extends PersonCommand {
  signal: AbortSignal;
}

/**
 * The human gate: shows the change and the review, asks the person to type
 * the packet id (or --yes), records who approved which tree, and lands
 * exactly that tree (re-gated if the target moved).
 */
export async function approve(options: ApproveOptions): Promise<ExitCode> {
  const { output, id } = options;
  const start = await personPreamble("approve", options, {
    // With a shared remote, any clone approves: the target and the held attempts are the remote's, fetched first.
    before: async () => {
      const head = await loadHead(options.cwd);
      const remote = head.ok ? head.head.config?.target.remote : undefined;
      if (!head.ok || !remote) return undefined;
      const synced = await syncWithRemote(head.head.root, remote, head.head.branch);
      if (!synced.ok) {
        output.err(`factory approve: ${synced.reason}; nothing was approved.`);
        return EXIT.halted;
      }
      const unfetched = await fetchHeld(head.head.root, remote);
      if (unfetched) output.err(`notice: the held attempts on ${remote} could not be fetched (${unfetched}); approving from what this clone has`);
      return undefined;
    },
  });
  if (!start.ok) return start.code;
  const { loaded } = start;
  const { workspace, packet, record } = loaded;
  const finished = await finishLeftCheckout(workspace.root, workspace.branch);
  if (finished) output.err(`notice: ${finished}`);
  // git's history may say it landed while the ledger does not (an approve or run killed after moving the target).
  const landed = packet ? landedVersion(await landedPackets(workspace.root, workspace.tip, { cacheFile: landedCacheFile(workspace.root) }), id, packet.sha256) : undefined;
  if (packet && landed && record?.status.state !== "merged") {
    await withLandLock(workspace.root, async () => recordLandedVersions(workspace.root, workspace.ledger, workspace.branch, [packet], (await workspace.ledger.read()).state));
    output.err(
      `${id} is merged already (${landed.commit.slice(0, 10)}, by its Factory-Packet trailers), by an approval or run that was stopped before recording it; it is recorded as merged now, nothing to do.`,
    );
    return EXIT.invalid;
  }
  const status = record?.status;
  if (!packet || !record || status?.state !== "awaiting_human") {
    output.err(`${id} is ${status?.state ?? "queued"}, not awaiting_human; only a held packet can be approved`);
    return EXIT.invalid;
  }
  if (record.sha256 !== packet.sha256) {
    output.err(`${id}'s packet file changed since the attempt was held; the held work is for the old version. The next \`factory run\` runs the new one.`);
    return EXIT.invalid;
  }
  // The held commit is what was reviewed, and what lands. An approval or landing stopped during its
  // re-gate leaves the task branch on a merge of it with the tip: the re-gate starts again from it.
  if (!(await resolveCommit(workspace.root, `${status.commit}^{commit}`))) {
    output.err(`the held commit ${status.commit.slice(0, 10)} of ${id} is no longer in the repository; nothing was approved. \`factory reject ${id} --reason …\` sends it back.`);
    return EXIT.invalid;
  }
  const branchHead = await resolveCommit(workspace.root, taskBranch(id));
  // No task branch here at all is an approval from another clone, not one that was stopped.
  if (branchHead !== undefined && branchHead !== status.commit)
    output.err(`notice: ${taskBranch(id)} was left at ${branchHead.slice(0, 10)} (a stopped approval or landing); approving the held commit ${status.commit.slice(0, 10)}, re-gated from the start`);

  // The spec may have moved while the work waited for a person: approving it would land work cut from an old spec.
  const drift = await checkSpecDrift(workspace.root, packet, workspace.tip);
  if (drift) {
    await workspace.ledger.append([{ kind: "blocked", packet: id, attempt: status.attempt, reason: drift }]);
    output.err(`factory approve refused: ${drift}. ${id} is now blocked; after re-cutting it, \`factory reset ${id}\` queues it again.`);
    return EXIT.halted;
  }

  // What agents wrote first, quoted and bounded; the diff; then the factory's own facts, last before the prompt,
  // where no agent text can push them out of view (and every byte of it reaches the terminal inert: log/output.ts).
  const claims = implementerClaims(workspace.root, id, status.attempt);
  if (claims.summary) output.out(`The implementer says (a claim, checked by the gates and the review):\n${quoted(claims.summary)}`);
  for (const deviation of claims.deviations ?? []) output.out(`  declared deviation from "${bounded(deviation.from_packet)}": ${bounded(deviation.reason)}`);
  if (record.feedback.length) output.out(`This attempt was told why the last one was sent back:\n${record.feedback.map((item) => `  - ${bounded(item.split("\n")[0] ?? "")}`).join("\n")}`);
  output.out(reviewSummary(record, status.attempt));
  output.out("");
  output.out((await diffText(workspace.root, status.fork, status.commit)).trimEnd());
  output.out("");
  output.out(`${id}: ${packet.goal}`);
  output.out(`held attempt ${status.attempt}, tree ${status.tree.slice(0, 12)}, branch ${status.branch}`);
  output.out((await diffStat(workspace.root, status.fork, status.commit)).trimEnd());
  output.out("");

  if (!(await confirmByPerson("approve", id, "approve and merge", options, output))) return EXIT.invalid;
  const config = workspace.config;
  if (!config) return EXIT.invalid;
  // One landing at a time: another approval, a rejection or a run may have acted while this one was asking.
  try {
    return await withLandLock(workspace.root, () => approveIfStillHeld({ ...options, workspace, packet, record, status, config }));
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    output.err(`factory approve interrupted: nothing was merged; ${id} is still held, and \`factory approve ${id}\` starts its re-gate again.`);
    return EXIT.interrupted;
  }
}

async function approveIfStillHeld(input: ApproveOptions & ApprovalInput): Promise<ExitCode> {
  const { output, id, workspace, status } = input;
  const now = (await workspace.ledger.read()).state.packets.get(id)?.status;
  if (now?.state !== "awaiting_human" || now.commit !== status.commit) {
    output.err(
      now?.state === "merged"
        ? `${id} is merged already (${now.commit.slice(0, 10)}), by an approval or run that came first; nothing to do.`
        : `${id} is ${now?.state ?? "queued"} now, no longer the held attempt you saw; nothing was approved.`,
    );
    return EXIT.invalid;
  }
  // Back to the held commit, whatever a stopped re-gate left (a merge commit, a merge half done): its
  // installed dependencies stay. Without a worktree, the landing makes one of the held commit.
  const worktree = worktreePath(workspace.root, id);
  if (existsSync(worktree)) {
    const cleared = await clearLeftWorktreeLock(workspace.root, worktree);
    if (cleared) output.err(`notice: removed git's lock file ${cleared}, left in ${id}'s worktree by a factory command that was stopped mid-way`);
    await resetWorktreeTo(worktree, status.commit);
  }
  // On the PostgreSQL ledger the approval holds a leased, fenced claim on the packet while it lands: an
  // approval or rejection on another machine waits its turn, and the landing commit names the fence.
  const shared = workspace.ledger;
  if (!isPgLedger(shared)) return approveLocked(input);
  const owner = { run: `approve-${randomUUID()}`, pid: process.pid, host: hostname() };
  let claims: WorkerClaims;
  try {
    claims = await startWorkerClaims(shared, {
      worker: `approve@${hostname()}:${process.pid}`,
      owner,
      leaseMs: input.config.workers.leaseMs,
      project: await projectOf(workspace.root, workspace.branch, input.config.target.remote),
    });
  } catch (error) {
    if (!(error instanceof OtherProjectError)) throw error;
    output.err(`factory approve refused: ${error.message}; nothing was approved.`);
    return EXIT.invalid;
  }
  try {
    const claim = await claimHeld(shared, id, status.commit, claims);
    if (!claim.ok) {
      output.err(`factory approve refused: ${claim.reason}; nothing was approved.`);
      return EXIT.invalid;
    }
    return await approveLocked({ ...input, claims });
  } finally {
    await claims.stop();
  }
}

interface ApprovalInput {
  workspace: Workspace;
  packet: Packet;
  record: PacketHistory;
  config: Config;
  status: Extract<PacketRecord["status"], { state: "awaiting_human" }>;
}

async function approveLocked(input: ApproveOptions & ApprovalInput & { claims?: WorkerClaims }): Promise<ExitCode> {
  const { output, id, workspace, packet, record, status, config, signal } = input;
  const by = await personName(workspace.root);
  await workspace.ledger.append([{ kind: "approved", packet: id, by, tree: status.tree }]);

  const progress = createProgress(output, undefined);
  const ctx: RunContext = {
    ledger: workspace.ledger,
    root: workspace.root,
    config,
    branch: workspace.branch,
    emit: progress.emit,
    signal,
    owner: { run: `approve-${Date.now()}`, pid: process.pid, host: "" },
    adapters: new Map(),
    budget: new Budget(undefined),
    waits: new AgentWaits(),
    ...(input.claims ? { claims: input.claims } : {}),
  };
  const { planted, gates, counts } = recordedAttempt(record, status.attempt);
  const landed = await land(ctx, {
    packet,
    attempt: status.attempt,
    commit: status.commit,
    fork: status.fork,
    runDir: attemptDir(workspace.root, id, status.attempt),
    planted: planted?.files ?? [],
    plantedCases: planted?.cases ?? {},
    plantedCommit: planted?.commit ?? status.fork,
    provenance: { attempt: status.attempt, gates, counts, approvedBy: by, ...(answersOf(record).length ? { answers: answersOf(record) } : {}) },
  });
  const outcome = await applyLanding(ctx, {
    packet,
    attempt: status.attempt,
    landed,
    report: { end: { kind: "environment-error", reason: "" }, forkCommit: status.fork, commit: status.commit, gates },
    attemptsUsed: record.attemptsUsed,
    maxAttempts: packet.maxAttempts + record.extraAttempts,
  });
  if (outcome.kind === "merged") {
    output.out(`Approved by ${by} and merged into ${workspace.branch} as ${outcome.commit.slice(0, 10)}.`);
    const notifier = new Notifier(workspace.root, input.config.notify);
    notifier.send({ event: "approved", packet: id, by, commit: outcome.commit });
    for (const failure of await notifier.settle()) output.err(`warning: a notification was not delivered: ${failure}`);
    return EXIT.ok;
  }
  output.err(`Approved by ${by}, but not merged: ${outcome.kind === "merge-blocked" ? `${outcome.reason}. The next \`factory run\` lands it.` : outcome.kind}`);
  return EXIT.halted;
}

/** Agent text on the approve screen: at most this many lines of it, each at most 300 characters. */
const CLAIM_LINES = 12;

/** Pure: an agent's text as quoted lines, bounded. */
export function quoted(text: string): string {
  const lines = text.split("\n");
  const shown = lines.slice(0, CLAIM_LINES).map((line) => `  > ${bounded(line)}`);
  return lines.length > CLAIM_LINES ? [...shown, `  > … (${lines.length - CLAIM_LINES} more lines, in factory show)`].join("\n") : shown.join("\n");
}

/** Pure: one line of agent text, at most 300 characters. */
function bounded(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The review of the held attempt as the factory recorded it in the ledger when it read it. */
function reviewSummary(record: PacketHistory, attempt: number): string {
  const recorded = record.events.filter((event) => event.kind === "review-recorded" && event.attempt === attempt).pop();
  if (recorded?.kind !== "review-recorded") return "(no review was recorded for this attempt)";
  return [
    `Review: ${recorded.verdict}${recorded.effective !== recorded.verdict ? ` (the factory's verdict: ${recorded.effective}; ${recorded.overrides.join("; ")})` : ""}`,
    ...(recorded.rulings ?? []).map((ruling) => `  ${ruling.status.padEnd(12)} ${ruling.id}${ruling.evidence ? `  (${ruling.evidence})` : ""}`),
    ...(recorded.findings ?? []).map((finding) => `  ${finding.severity}: ${finding.claim}${finding.where ? ` (${finding.where})` : ""}`),
    "",
  ].join("\n");
}
