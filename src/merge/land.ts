import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { TestResult } from "../gates/junit.js";
import { describeRedOnLanding, redOnLanding } from "../gates/landing-tripwire.js";
import { type GateReport, isGreen } from "../gates/types.js";
import { pushLanding } from "../git/remote.js";
import { gitTry, headOf, resolveCommit, signingProblem, treeOf, wantsSignedCommits } from "../git/repo.js";
import { landedCacheFile, landedPackets, landedVersion } from "../git/trailers.js";
import { createWorktree, mergeInWorktree, worktreeStatus } from "../git/worktree.js";
import { measureBaseline, seedBaseline } from "../loop/baseline.js";
import { type RunContext, surfaceOf, taskBranch, worktreePath } from "../loop/context.js";
import { BUILTIN_GATES, runGates } from "../loop/gates.js";
import { recordReruns } from "../loop/reruns.js";
import { checkSpecDrift } from "../loop/spec-drift.js";
import type { Packet } from "../packet/types.js";
import { finishCheckout, moveBranch } from "./checkout.js";
import type { LandInput } from "./land-input.js";
import { mergeMessage } from "./message.js";
import { openForReview } from "./pull-request.js";
import { type RemotePatience, reachedAgain, syncPatiently, waitForRemote } from "./target-sync.js";

export type { LandInput } from "./land-input.js";

export type LandResult =
  | { kind: "merged"; commit: string; tree: string }
  | { kind: "merge-blocked"; reason: string }
  | { kind: "conflict"; reason: string }
  | { kind: "regate-failed"; reports: GateReport[] }
  | { kind: "spec-drift"; reason: string }
  | { kind: "environment-error"; reason: string }
  /** The landing's own check found a test failing on the tree to land that did not fail on the tip: the factory's verdict was wrong. */
  | { kind: "verdict-contradicted"; reason: string }
  /** Pull-request mode: pushed as the packet's branch and a PR opened; it lands when the forge merges it. */
  | { kind: "in-review"; number: number; url: string; branch: string; head: string; tree: string /** The tip the head was built and gated on. */; base: string };

const MAX_RACES = 5;

/**
 * Lands gated work on the target branch (DESIGN §9). The task branch is first
 * brought up to the current tip; if that changed the tree, every gate runs
 * again, against the tip's own baseline (measured in a checkout of the tip).
 * The spec must not have drifted. The squash commit has exactly the gated
 * tree and the tip as its parent, and the target moves only by
 * compare-and-swap. A checkout of the target is moved only by a fast-forward,
 * which keeps unrelated uncommitted changes and refuses when it would not.
 */
export async function land(ctx: RunContext, input: LandInput): Promise<LandResult> {
  const worktree = input.worktree ?? worktreePath(ctx.root, input.packet.id);
  const finished = await finishCheckout(ctx.root, ctx.branch);
  if (finished) ctx.emit({ kind: "notice", packet: input.packet.id, message: finished });
  let commit = input.commit;
  let gates = input.provenance.gates;
  let tests = input.tests;
  const remote = ctx.config.target.remote;
  // An unreachable remote is waited out, one patience for the whole landing; past it the gated work waits, unspent.
  const patience = remotePatience(ctx, input.packet.id);
  const unreachable = (reason: string): LandResult => ({ kind: "merge-blocked", reason: `${reason}; the gated work lands on the next run, unspent` });
  for (let race = 0, outages = 0; race < MAX_RACES; race++) {
    // With a shared remote, the tip is what the remote holds now: fetched, and this clone's branch brought to it.
    if (remote) {
      const synced = await syncPatiently(ctx.root, remote, ctx.branch, patience);
      if (!synced.ok) return synced.unreachable ? unreachable(synced.reason) : { kind: "environment-error", reason: synced.reason };
    }
    const tip = await resolveCommit(ctx.root, ctx.branch);
    if (!tip) return { kind: "environment-error", reason: `the target branch ${ctx.branch} no longer exists` };
    // Where the target is still at the tip the attempt was planted on, the gated tree was judged against it:
    // it lands as it is, with no question to git. Anywhere else, the work is brought up to the tip first.
    const onTip = (tip === input.fork && commit === input.commit) || (await gitTry(ctx.root, ["merge-base", "--is-ancestor", tip, commit])).ok;
    if (!onTip) {
      // Bringing it up to the tip merges and gates in the packet's worktree: never for a claim lost meanwhile, whose
      // successor may be working in that very worktree (two workers in one checkout) or has removed it after landing.
      await assertClaim(ctx, input);
      const caught = await catchUp(ctx, { ...input, worktree, commit, tip });
      if (caught.kind !== "caught-up") return caught;
      commit = caught.commit;
      if (caught.judged) ({ gates, tests } = caught.judged);
    }
    const drift = await checkSpecDrift(ctx.root, input.packet, tip);
    if (drift) return { kind: "spec-drift", reason: drift };
    // This exact version may be on the target already (an approve that ran meanwhile, a crash after the move): never twice.
    const already = landedVersion(await landedPackets(ctx.root, tip, { cacheFile: landedCacheFile(ctx.root) }), input.packet.id, input.packet.sha256);
    if (already) return { kind: "merged", commit: already.commit, tree: await treeOf(ctx.root, already.commit) };
    const contradicted = await tripwire(ctx, { packet: input.packet, tip, tests, runDir: input.runDir });
    if (contradicted) return contradicted;
    const tree = await treeOf(ctx.root, commit);
    // On the PostgreSQL ledger the landing is the claim holder's write too: made only while its fence is current, and it names it.
    const fence = input.claim?.fence ?? ctx.claims?.fenceOf(input.packet.id);
    const message = mergeMessage(ctx.config.merge.message, input.packet, { ...input.provenance, gates, ...(fence !== undefined ? { fence } : {}) });
    const signing = await wantsSignedCommits(ctx.root);
    const made = await gitTry(ctx.root, ["commit-tree", ...(signing ? ["-S"] : []), tree, "-p", tip, "-m", message], { identity: true, signed: true });
    // Git refusing the landing's commit (a signing key that stopped working) is the machine's, said in git's words.
    if (!made.ok) return { kind: "environment-error", reason: signing ? signingProblem(made.message) : `git cannot make the landing commit: ${made.message.trim().split("\n").slice(-2).join(" / ")}` };
    const squash = made.out.trim();
    await assertClaim(ctx, input);
    // Pull-request mode: the same gated squash on the same tip, pushed as the packet's branch for the forge to merge.
    if (ctx.config.target.mode === "pull-request") return openForReview(ctx, { packet: input.packet, attempt: input.attempt, squash, tree, base: tip, message, gates });
    if (remote) {
      // The remote is the authority: the landing is the push, compare-and-swap on the tip it was gated against.
      const pushed = await pushLanding(ctx.root, { remote, branch: ctx.branch, commit: squash, expected: tip });
      if (pushed.kind === "stale") {
        ctx.emit({ kind: "notice", packet: input.packet.id, message: `${remote}/${ctx.branch} moved while landing (another worker's push won); fetching and landing again on its new tip` });
        continue;
      }
      if (pushed.kind !== "unreachable") await reachedAgain(patience);
      if (pushed.kind === "refused") return { kind: "environment-error", reason: pushed.reason };
      if (pushed.kind === "unreachable") {
        const gaveUp = await waitForRemote(remote, pushed.reason, outages++, patience);
        if (gaveUp) return unreachable(gaveUp.reason);
        race--; // not a race lost: the same landing, once the remote answers
        continue;
      }
      // This clone's branch follows the remote; if it cannot now, the next fetch brings it.
      const followed = await moveBranch(ctx.root, ctx.branch, tip, squash);
      if (followed.kind === "moved" && followed.notice) ctx.emit({ kind: "notice", packet: input.packet.id, message: followed.notice });
      const surface = surfaceOf(ctx.config, input.packet);
      if (surface && tests) await seedBaseline(ctx.root, { commit: squash, surface, results: tests });
      return { kind: "merged", commit: squash, tree };
    }
    const moved = await moveBranch(ctx.root, ctx.branch, tip, squash);
    if (moved.kind === "moved") {
      if (moved.notice) ctx.emit({ kind: "notice", packet: input.packet.id, message: moved.notice });
      const surface = surfaceOf(ctx.config, input.packet);
      // The squash has exactly the gated tree: its gate results are the next packets' baseline there.
      if (surface && tests) await seedBaseline(ctx.root, { commit: squash, surface, results: tests });
      return { kind: "merged", commit: squash, tree };
    }
    if (moved.kind === "dirty") return { kind: "merge-blocked", reason: moved.reason };
    // The tip moved under us: go round again with the new tip.
  }
  // Landings in this process and other factory processes take turns under the landing lock, so only
  // something else (a person, a script) moved the target: the gated work waits for the next run, unspent.
  return {
    kind: "merge-blocked",
    reason: remote
      ? `${remote}/${ctx.branch} kept moving while landing (${MAX_RACES} tries, each push lost to another); the gated work lands on the next try, unspent`
      : `${ctx.branch} kept moving while landing (${MAX_RACES} tries), moved by something other than the factory`,
  };
}

/** Throws ClaimLost unless the landing's claim (its own worker's, or the one a fleet's lander checks for another) is current. */
async function assertClaim(ctx: RunContext, input: LandInput): Promise<void> {
  if (input.claim) await input.claim.assertCurrent();
  else if (ctx.claims?.fenceOf(input.packet.id) !== undefined || ctx.claims?.lost(input.packet.id)) await ctx.claims.assertHeld(input.packet.id);
}

/** Gated work brought up to a tip that moved, and what judges it there: a merge batch's gating or a re-gate; none when the move left its tree as gated. */
type CaughtUp = { kind: "caught-up"; commit: string; judged?: { gates: readonly GateReport[]; tests: ReadonlyMap<string, TestResult[]> | undefined } };

/**
 * The work merged with the tip in its worktree: a combination a merge batch gated green lands with the batch's
 * reports, the one a batch found red fails with them, any other changed tree is re-gated against the tip's
 * own baseline (what the combination breaks shows as a regression).
 */
async function catchUp(ctx: RunContext, input: LandInput & { worktree: string; commit: string; tip: string }): Promise<CaughtUp | LandResult> {
  const { tip, worktree } = input;
  const updated = await bringUpToDate(ctx, input);
  if (updated.kind !== "ok") return updated;
  const combined = updated.treeChanged ? await treeOf(ctx.root, updated.commit) : undefined;
  const batched = combined ? input.covered?.get(combined) : undefined;
  if (combined && combined === input.broken?.tree) {
    ctx.emit({
      kind: "step",
      packet: input.packet.id,
      attempt: input.attempt,
      step: "batched",
      detail: `its combination with ${ctx.branch} at ${tip.slice(0, 10)} is the one the merge batch (${input.broken.packets.join(", ")}) found red`,
    });
    return { kind: "regate-failed", reports: input.broken.reports };
  }
  if (batched) {
    ctx.emit({
      kind: "step",
      packet: input.packet.id,
      attempt: input.attempt,
      step: "batched",
      detail: `its combination with ${ctx.branch} at ${tip.slice(0, 10)} was gated with ${batched.packets.join(", ")}`,
    });
    const gates = [...input.provenance.gates.filter((gate) => BUILTIN_GATES.includes(gate.name)), ...batched.reports];
    return { kind: "caught-up", commit: updated.commit, judged: { gates, tests: batched.tests } };
  } else if (updated.treeChanged) {
    ctx.emit({ kind: "step", packet: input.packet.id, attempt: input.attempt, step: "re-gate", detail: `${ctx.branch} moved to ${tip.slice(0, 10)}; gating the combined tree` });
    // Its own directory, so the first gating's reports and logs are never overwritten.
    const runDir = join(input.runDir, `regate-${tip.slice(0, 10)}`);
    mkdirSync(runDir, { recursive: true });
    const surface = surfaceOf(ctx.config, input.packet);
    // The tip's own baseline, never the combined tree's: what the combination breaks must show as a regression.
    const baseline = surface?.gates.some((gate) => gate.tests)
      ? await measureBaseline(ctx, { surface, commit: tip, runDir, repairs: input.packet.repairs })
      : { ok: true as const, results: new Map(), cached: true };
    if (!baseline.ok) return { kind: "environment-error", reason: `baseline at ${tip.slice(0, 10)}: ${baseline.reason}` };
    const regated = await runGates(ctx, {
      packet: input.packet,
      attempt: input.attempt,
      surface,
      worktree,
      plantedCommit: input.plantedCommit,
      planted: input.planted,
      plantedCases: input.plantedCases,
      baseline: baseline.results,
      tip,
      runDir,
      combined: { agentCommit: input.commit, builtins: input.provenance.gates.filter((gate) => BUILTIN_GATES.includes(gate.name)) },
    });
    await recordReruns(ctx, input.packet.id, input.attempt, regated.reruns);
    if (!isGreen(regated.reports)) return { kind: "regate-failed", reports: regated.reports };
    return { kind: "caught-up", commit: regated.commit, judged: { gates: regated.reports, tests: regated.tests } };
  }
  return { kind: "caught-up", commit: updated.commit };
}

/**
 * The landing's own check, after every gate: the tests that fail on the tree about to land must have failed
 * on the tip's own tree (its baseline, measured there or seeded by the landing that made it). A test that
 * did not is the factory's verdict contradicted: nothing lands.
 */
async function tripwire(ctx: RunContext, input: { packet: Packet; tip: string; tests: ReadonlyMap<string, TestResult[]> | undefined; runDir: string }): Promise<LandResult | undefined> {
  const surface = surfaceOf(ctx.config, input.packet);
  if (!surface || !input.tests || input.tests.size === 0) return undefined;
  const baseline = await measureBaseline(ctx, { surface, commit: input.tip, runDir: join(input.runDir, `tripwire-${input.tip.slice(0, 10)}`), repairs: input.packet.repairs });
  if (!baseline.ok) return { kind: "environment-error", reason: `baseline at ${input.tip.slice(0, 10)}: ${baseline.reason}` };
  const red = redOnLanding(baseline.results, input.tests);
  return red.length > 0 ? { kind: "verdict-contradicted", reason: describeRedOnLanding(red, input.tip, input.packet.id) } : undefined;
}

/** How a landing or an attempt of `packet` waits out an unreachable remote: said once, as a notice of the packet. */
export function remotePatience(ctx: RunContext, packet: string): RemotePatience {
  const remote = ctx.config.target.remote ?? "";
  const run = ctx.owner.run;
  return {
    patienceMs: ctx.config.target.patienceMs,
    signal: ctx.signal,
    // In the ledger too, so `factory status` (on any machine) says which remote this run waits for, and since when.
    async onUnreachable(message, outage) {
      ctx.emit({ kind: "notice", packet, message });
      await ctx.ledger.append([{ kind: "remote-unreachable", run, remote, ...outage }]);
    },
    async onBack() {
      ctx.emit({ kind: "notice", packet, message: `${remote} answers again` });
      await ctx.ledger.append([{ kind: "remote-reachable", run, remote }]);
    },
  };
}

type UpToDate = { kind: "ok"; commit: string; treeChanged: boolean } | LandResult;

async function bringUpToDate(ctx: RunContext, input: LandInput & { worktree: string; commit: string; tip: string }): Promise<UpToDate> {
  if (!existsSync(input.worktree)) {
    await createWorktree(ctx.root, { path: input.worktree, branch: taskBranch(input.packet.id), start: input.commit });
  }
  const before = await treeOf(ctx.root, input.commit);
  const merged = await mergeInWorktree(input.worktree, ["--no-edit", "--no-ff", "-m", `factory: bring ${input.packet.id} up to ${ctx.branch}`, input.tip]);
  if (!merged.ok) {
    const conflicted = (await worktreeStatus(input.worktree)).filter((entry) => entry.code.includes("U") || entry.code === "AA" || entry.code === "DD").map((entry) => entry.path);
    await gitTry(input.worktree, ["merge", "--abort"]);
    return { kind: "conflict", reason: `the change conflicts with ${ctx.branch} at ${input.tip.slice(0, 10)}${conflicted.length ? ` in ${conflicted.join(", ")}` : ""}` };
  }
  const commit = await headOf(input.worktree);
  const after = await treeOf(ctx.root, commit);
  // The combined tree differs from the gated one whenever the target brought changes of its own.
  return { kind: "ok", commit, treeChanged: before !== after };
}
