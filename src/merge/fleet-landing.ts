import { join } from "node:path";
import type { TestResult } from "../gates/junit.js";
import { LANDING_REFS } from "../git/held-refs.js";
import { gitTry, resolveCommit } from "../git/repo.js";
import { createWorktree, removeWorktree } from "../git/worktree.js";
import { ClaimLost } from "../ledger/pg-claims.js";
import type { PgLandings, QueuedLanding } from "../ledger/pg-landings.js";
import { withLandLock } from "../ledger/store.js";
import { attemptDir, checkInterrupted, Interrupted, type RunContext, worktreesDir } from "../loop/context.js";
import { stopPoint } from "../util/crash-point.js";
import { sleepUntil } from "../util/sleep.js";
import { type BatchVerdict, gateBatch } from "./batch.js";
import { mayArriveBy, regateEstimate } from "./gather.js";
import { type LandInput, type LandResult, land, remotePatience } from "./land.js";
import { syncPatiently } from "./target-sync.js";

/**
 * The fleet's landing queue (issue 56 §1). Each worker's gated attempt is a
 * row of the ledger database (its commit pushed to the remote under
 * refs/factory/landing/), and one lander at a time, whichever waiting worker
 * takes the lease, lands every waiting candidate of the fleet: several at
 * once are gated together on their combination (merge/batch.ts, bisected
 * when red), each then lands through land() with its own compare-and-swap,
 * checks and trailers, and the lander writes each row's result. The
 * candidate's own worker records that result under its claim; meanwhile its
 * attempt is parked, so it goes back to implementing instead of re-gating
 * on every tip another worker's landing made.
 *
 * The lander lands another worker's candidate only while that worker's
 * claim is live with the fence it queued with (checked again right before
 * the push). A lander killed mid-landing leaves its rows waiting: its lease
 * runs out and the next lander lands them (a push it made is found by its
 * trailer, never landed twice).
 */

const POLL_MS = 250;

/** A row's result: what land() said, or that the candidate's claim was no longer its worker's. */
export type FleetResult = LandResult | { kind: "claim-lost"; why: string };

/** A candidate as its row holds it: the LandInput without what only its own clone has. */
export interface Candidate extends Omit<LandInput, "tests" | "covered" | "broken" | "worktree" | "claim"> {
  tests?: [string, TestResult[]][];
}

/** Pure: the row's data for a landing input. */
export function toCandidate(input: LandInput): Candidate {
  const { tests, covered: _covered, broken: _broken, worktree: _worktree, claim: _claim, ...rest } = input;
  return { ...rest, ...(tests ? { tests: [...tests] } : {}) };
}

/** Pure: a row's data as a landing input, landed from `worktree` with its logs in `runDir`. */
export function fromCandidate(candidate: Candidate, where: { worktree: string; runDir: string }): LandInput {
  const { tests, ...rest } = candidate;
  return { ...rest, ...(tests ? { tests: new Map(tests) } : {}), worktree: where.worktree, runDir: where.runDir };
}

/** Which worker of this process is landing for the fleet now (one lander per run, however many attempts wait). */
const landing = new WeakSet<RunContext>();

/**
 * Queues a gated attempt for the fleet's lander and waits for its result,
 * landing the fleet's waiting candidates itself whenever it can take the
 * lander's lease. Throws ClaimLost when the claim was no longer its own;
 * undefined when the remote would not hold its commit for the lander (the
 * worker then lands it itself, as before the queue).
 */
export async function landThroughFleet(packetCtx: RunContext, landings: PgLandings, input: LandInput, onParked: (parked: boolean) => void = () => undefined): Promise<LandResult | undefined> {
  const ctx = packetCtx.runContext ?? packetCtx;
  const fence = ctx.claims?.fenceOf(input.packet.id);
  if (fence === undefined) throw new ClaimLost(input.packet.id, "it was lost before it could be queued to land");
  const remote = ctx.config.target.remote;
  if (remote) {
    const pushed = await gitTry(ctx.root, ["push", "--quiet", "--no-verify", "--force", remote, `${input.commit}:${LANDING_REFS}${input.packet.id}`]);
    if (!pushed.ok) {
      // A remote that takes only its branches: the queue is a saving, never a condition; this worker lands it itself.
      const said = pushed.message.trim().split("\n").slice(-1)[0];
      ctx.emit({
        kind: "notice",
        packet: input.packet.id,
        message: `${remote} refused ${LANDING_REFS}${input.packet.id}, where the fleet's lander would fetch it (${said}): this worker lands it itself`,
      });
      return undefined;
    }
  }
  const id = await landings.enqueue({ packet: input.packet.id, attempt: input.attempt, fence, worker: landings.worker, candidate: toCandidate(input) });
  const own = new Map([[id, input]]);
  // Parked while it waits for another lander, or gathers a batch: its worker may start its next packet meanwhile.
  // Landed at once, it is never parked: the next attempt then starts from its landing, not from a tip it must re-gate on.
  let parked = false;
  const park = (now: boolean): void => {
    if (now === parked) return;
    parked = now;
    onParked(now);
  };
  try {
    return await awaitLanding(packetCtx, landings, { id, input, own, park });
  } finally {
    park(false);
  }
}

async function awaitLanding(
  packetCtx: RunContext,
  landings: PgLandings,
  mine: { id: number; input: LandInput; own: ReadonlyMap<number, LandInput>; park: (parked: boolean) => void },
): Promise<LandResult> {
  const ctx = packetCtx.runContext ?? packetCtx;
  const { id, input, own, park } = mine;
  for (;;) {
    const result = (await landings.result(id)) as FleetResult | undefined;
    if (result) {
      if (result.kind === "claim-lost") throw new ClaimLost(input.packet.id, result.why);
      return result;
    }
    if (packetCtx.signal.aborted && (await landings.withdraw(id))) {
      if (ctx.claims?.lost(input.packet.id)) throw new ClaimLost(input.packet.id, "its lease ran out while it waited to land");
      throw new Interrupted();
    }
    if (!landing.has(ctx) && !ctx.signal.aborted && (await landings.takeLander())) {
      landing.add(ctx);
      park(false);
      try {
        await landAsLander(ctx, landings, { id, own, park });
      } finally {
        landing.delete(ctx);
        await landings.releaseLander().catch(() => undefined);
      }
      continue;
    }
    park(true);
    // Stopping, with the row being landed right now: its result is waited for (the poll, not the stopped signal).
    await sleepUntil(Date.now() + POLL_MS, packetCtx.signal.aborted ? new AbortController().signal : packetCtx.signal);
  }
}

/**
 * Holding the lander's lease: lands the fleet's waiting candidates, batch after batch, until its own is landed
 * (then the lease goes back: a worker waiting for its own result takes it within a poll).
 */
async function landAsLander(ctx: RunContext, landings: PgLandings, mine: { id: number; own: ReadonlyMap<number, LandInput>; park: (parked: boolean) => void }): Promise<void> {
  const { own } = mine;
  const renewal = setInterval(() => void landings.takeLander().catch(() => undefined), Math.max(1_000, landings.leaseMs / 3));
  try {
    while ((await landings.result(mine.id)) === undefined) {
      checkInterrupted(ctx.signal);
      const batch = await gathered(ctx, landings, mine.park);
      if (batch.length === 0) return;
      stopPoint("lander-before-batch");
      await withLandLock(ctx.root, () => landBatch(ctx, landings, batch, own));
    }
  } finally {
    clearInterval(renewal);
  }
}

/** The candidates to land together: the oldest waiting ones, after the wait for more that their re-gate would pay for. */
async function gathered(ctx: RunContext, landings: PgLandings, park: (parked: boolean) => void): Promise<QueuedLanding[]> {
  const size = Math.max(1, ctx.config.merge.batch);
  let waiting = await landings.waiting();
  const first = waiting[0];
  if (!first || size < 2 || waiting.length >= size) return waiting.slice(0, size);
  const remote = ctx.config.target.remote;
  if (remote) await syncPatiently(ctx.root, remote, ctx.branch, remotePatience(ctx, first.packet));
  const candidate = first.candidate as Candidate;
  if ((await resolveCommit(ctx.root, ctx.branch)) === candidate.fork) return waiting.slice(0, size); // it lands as gated: nothing to save
  // Its re-gate alone would cost the tip's baseline in this clone and its gates again: about twice its gates' time.
  // Waiting that long for the fleet's attempts in flight to join costs no worker (the candidate is parked) and no more time.
  const wait = 2 * regateEstimate(candidate);
  const deadline = Date.now() + wait;
  const quickest = await landings.quickest();
  const mayArrive = async (): Promise<boolean> => {
    const now = Date.now();
    return mayArriveBy(
      (await landings.inFlight()).map((flight) => ({ started: now - flight.ageMs })),
      quickest,
      deadline,
    );
  };
  if (!(await mayArrive())) return waiting.slice(0, size);
  ctx.emit({
    kind: "step",
    packet: first.packet,
    attempt: first.attempt,
    step: "waiting",
    detail: `up to ${(wait / 1000).toFixed(1)} s for the fleet's attempts in flight to join its merge batch (its re-gate alone, the tip's baseline and its gates, would take about that)`,
  });
  park(true);
  try {
    while (waiting.length < size && Date.now() < deadline && !ctx.signal.aborted && (await mayArrive())) {
      await sleepUntil(Math.min(deadline, Date.now() + POLL_MS), ctx.signal);
      waiting = await landings.waiting();
    }
  } finally {
    park(false);
  }
  return waiting.slice(0, size);
}

/** Lands one batch of the fleet's candidates in order and writes each one's result; a red batch's later members wait for the next. */
async function landBatch(ctx: RunContext, landings: PgLandings, rows: readonly QueuedLanding[], own: ReadonlyMap<number, LandInput>): Promise<void> {
  const remote = ctx.config.target.remote;
  if (remote && rows.some((row) => !own.has(row.id))) await gitTry(ctx.root, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", remote, `+${LANDING_REFS}*:${LANDING_REFS}*`]);
  const scratch: string[] = [];
  try {
    const inputs: { row: QueuedLanding; input: LandInput }[] = [];
    for (const row of rows) {
      const input = own.get(row.id) ?? (await foreignInput(ctx, landings, row, scratch));
      if ("kind" in input) await landings.settle(row.id, input);
      else inputs.push({ row, input });
    }
    let verdict: BatchVerdict | undefined;
    if (inputs.length > 1) {
      try {
        verdict = await gateBatch(
          ctx,
          inputs.map((entry) => entry.input),
        );
      } catch (error) {
        if (error instanceof Interrupted) throw error;
        ctx.emit({ kind: "notice", message: `the merge batch could not be gated (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); landing one at a time` });
      }
    }
    const covered = verdict?.covered;
    const broken = verdict?.broken;
    for (const { row, input } of inputs) {
      if (verdict?.deferred.includes(row.packet)) continue; // after the culprit: gated again without it, in the next batch
      const result = await landOne(ctx, landings, {
        ...input,
        ...(covered?.size ? { covered } : {}),
        ...(broken && broken.packet === row.packet ? { broken: { tree: broken.tree, reports: broken.reports, packets: broken.packets } } : {}),
      });
      await landings.settle(row.id, result);
      // Its ref has served (a retry pushes its own): gone from the remote, unless the packet's worker pushed another meanwhile, and from here.
      if (remote) await gitTry(ctx.root, ["push", "--quiet", "--no-verify", `--force-with-lease=${LANDING_REFS}${row.packet}:${input.commit}`, remote, `:${LANDING_REFS}${row.packet}`]);
      await gitTry(ctx.root, ["update-ref", "-d", `${LANDING_REFS}${row.packet}`, input.commit]);
    }
  } finally {
    for (const worktree of scratch) await removeWorktree(ctx.root, worktree).catch(() => undefined);
  }
}

/** One candidate landed; a lost claim and a failure of the lander are its result too (an interrupt is not: the row waits for the next lander). */
async function landOne(ctx: RunContext, landings: PgLandings, input: LandInput): Promise<FleetResult> {
  try {
    return await land(ctx, input);
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    if (error instanceof ClaimLost) return { kind: "claim-lost", why: error.message };
    return { kind: "environment-error", reason: `the fleet's lander (worker ${landings.worker}) failed to land it: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` };
  }
}

let scratchCount = 0;

/**
 * Another worker's candidate, made landable here: its commit checked out in a scratch worktree, its claim
 * checked now and again right before the push; or the row's result when it cannot be landed (a claim its
 * worker no longer holds: a worker that died or was taken over never has its candidate landed by another).
 */
async function foreignInput(ctx: RunContext, landings: PgLandings, row: QueuedLanding, scratch: string[]): Promise<LandInput | FleetResult> {
  const candidate = row.candidate as Candidate;
  const current = await landings.claimCurrent(row.packet, row.fence);
  if (!current.ok) return { kind: "claim-lost", why: `${current.why}; worker ${row.worker} queued it with fence ${row.fence}` };
  const there = await gitTry(ctx.root, ["cat-file", "-e", `${candidate.commit}^{commit}`]);
  if (!there.ok) {
    const reason = `its gated commit ${candidate.commit.slice(0, 10)} could not be had by the fleet's lander (worker ${landings.worker}): it is not on the remote under ${LANDING_REFS}${row.packet}`;
    return { kind: "environment-error", reason };
  }
  const worktree = join(worktreesDir(ctx.root), `_landing-${row.packet}-${row.attempt}-${process.pid}-${++scratchCount}`);
  await createWorktree(ctx.root, { path: worktree, start: candidate.commit });
  scratch.push(worktree);
  return {
    ...fromCandidate(candidate, { worktree, runDir: attemptDir(ctx.root, row.packet, row.attempt) }),
    claim: {
      fence: row.fence,
      assertCurrent: async () => {
        const current = await landings.claimCurrent(row.packet, row.fence);
        if (!current.ok) throw new ClaimLost(row.packet, `${current.why}; worker ${row.worker} queued it with fence ${row.fence}`);
      },
    },
  };
}
