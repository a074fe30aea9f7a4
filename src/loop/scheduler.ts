import PQueue from "p-queue";
import type { LedgerState, PacketRecord } from "../ledger/fold.js";
import { describeBreak } from "../ledger/store.js";
import { landingQueue } from "../merge/landing-queue.js";
import { orderQueue } from "../packet/graph.js";
import type { Packet } from "../packet/types.js";
import { sleepUntil } from "../util/sleep.js";
import { Paused, pausedBy, type RunContext } from "./context.js";
import { landPending, type PacketOutcome, processPacket } from "./process-packet.js";
import { watchReviews } from "./reviews.js";

export interface SchedulerOptions {
  packets: readonly Packet[];
  once: boolean;
  only: string | undefined;
  concurrency: number;
  /** A blocked packet holds only its dependents; the rest of the queue runs. */
  keepGoing: boolean;
  /** Merged packets whose landing the target no longer has: what requires them is not claimed. */
  gone?: ReadonlySet<string>;
  /** Told of each landing this run made itself (not another worker's), with its commit. */
  landed?: (id: string, commit: string) => void;
}

export type RunEnd = { outcome: "drained"; reason?: string } | { outcome: "halted"; reason: string } | { outcome: "interrupted"; reason: string };

/**
 * Drains the queue: claims the next runnable packet in plan order, runs one
 * attempt, applies the decision, and repeats. A blocked packet halts the
 * queue (running packets finish; nothing new is claimed); so do two
 * environment errors in a row, the cost cap and an interrupt.
 *
 * An attempt parked in the landing queue (its agents and gates done,
 * waiting for others to join its merge batch or behind another landing)
 * frees its worker: the next packet starts meanwhile, and may join a batch.
 * At most `[merge] batch` attempts are parked so, beyond `concurrency`.
 */
export async function drainQueue(ctx: RunContext, options: SchedulerOptions): Promise<RunEnd> {
  const landings = landingQueue(ctx);
  const slack = Math.max(1, ctx.config.merge.batch);
  const queue = new PQueue({ concurrency: options.concurrency + slack });
  const working = (): number => inFlight.size - Math.min(landings.parked, slack);
  let landingChanges = 0;
  let wake: (() => void) | undefined;
  const stopWatching = landings.onChange(() => {
    landingChanges++;
    wake?.();
  });
  const inFlight = new Set<string>();
  const tried = new Set<string>(); // merge-blocked this run: not picked again
  const notClaimed = new Set<string>(); // another worker had it: not picked again until the ledger changed
  const running = new Set<Promise<void>>();
  let halt: RunEnd | undefined;
  let environmentErrors = 0;
  let attempts = 0;
  const blocked: { id: string; reason: string }[] = [];
  let lastBlock: string | undefined; // the last packet's block, in the order outcomes arrive
  const waits = ctx.waits;

  /** A rate limit is the agent's: the agent a packet's limited call ran on, and how long it now waits. */
  const limitAgent = (packet: Packet, limited: { role: "implementer" | "reviewer"; resetsAt?: string }) => {
    const agent = agentOf(ctx, limited.role === "implementer" ? packet.tier : packet.reviewer);
    return { agent, wait: waits.limit(agent, limited.resetsAt, Date.now(), ctx.config.limits.rateLimitWaitMs, ctx.config.limits.rateLimitMaxWaits) };
  };
  const handle = async (packet: Packet, outcome: PacketOutcome): Promise<void> => {
    if (outcome.kind !== "retry") environmentErrors = 0;
    if (!(outcome.kind === "retry" && outcome.rateLimited)) for (const agent of agentsOf(ctx, packet)) waits.clear(agent);
    if (outcome.kind === "merged" || outcome.kind === "held") lastBlock = undefined;
    switch (outcome.kind) {
      case "blocked": {
        blocked.push({ id: packet.id, reason: outcome.reason });
        if (outcome.rateLimited) {
          const { agent, wait } = limitAgent(packet, outcome.rateLimited);
          if (!("halt" in wait) && wait.beyond) benchNotice(packet.id, agent, wait.until);
        }
        // A packet at fault itself says nothing about the machine: it never counts toward two blocks in a row.
        const same = outcome.packetFault ? undefined : blockKey(outcome.reason);
        if (!options.keepGoing || outcome.alarm) halt ??= { outcome: "halted", reason: `${packet.id} is blocked: ${outcome.reason}` };
        else if (same !== undefined && lastBlock === same)
          halt ??= { outcome: "halted", reason: `two packets in a row blocked for the same reason (the machine or the spec, not the work): ${packet.id}: ${outcome.reason}` };
        lastBlock = same;
        ctx.notifier?.send({ event: "blocked", packet: packet.id, reason: outcome.reason });
        break;
      }
      case "held":
        ctx.notifier?.send({ event: "awaiting_human", packet: packet.id });
        break;
      case "asked":
        ctx.notifier?.send({ event: "question", packet: packet.id, question: outcome.question, suggestions: outcome.suggestions });
        break;
      case "retry":
        environmentErrors = outcome.environment ? environmentErrors + 1 : 0;
        if (environmentErrors >= 2) halt ??= { outcome: "halted", reason: "two environment errors in a row: the machine is broken, not the work (see the gate and install logs)" };
        if (outcome.rateLimited) {
          const { agent, wait } = limitAgent(packet, outcome.rateLimited);
          if ("halt" in wait) halt ??= { outcome: "halted", reason: wait.halt };
          else if (wait.beyond) benchNotice(packet.id, agent, wait.until);
          else {
            const source = outcome.rateLimited.resetsAt ? "the reset it reported" : "backing off";
            ctx.emit({
              kind: "notice",
              packet: packet.id,
              message: `rate-limited: agent "${agent}" waits until ${new Date(wait.until).toISOString()} (${source}; no attempt spent); every packet on it waits too`,
            });
          }
        }
        break;
      case "interrupted":
        halt ??= ctx.signal.aborted ? { outcome: "interrupted", reason: outcome.reason } : { outcome: "halted", reason: outcome.reason };
        break;
      case "merge-blocked":
        tried.add(packet.id);
        break;
      case "not-claimed":
        notClaimed.add(packet.id);
        break;
      case "merged":
        options.landed?.(packet.id, outcome.commit);
        ctx.notifier?.send({ event: "merged", packet: packet.id, commit: outcome.commit });
        break;
      case "in-review":
        break;
    }
  };
  const told = new Set<string>(); // PRs said once to wait for a person
  const benchNotice = (packet: string, agent: string, until: number): void =>
    ctx.emit({
      kind: "notice",
      packet,
      message: `agent "${agent}" reports a rate limit until ${new Date(until).toISOString()}, further away than rate_limit_wait: its packets wait for a later run; the rest of the queue goes on`,
    });
  let benched: string | undefined; // the run ended with only packets of agents rate-limited past rate_limit_wait left
  // `factory pause --interrupt` stops the running attempts (recorded interrupted, unspent): they run under this too.
  const pause = new AbortController();
  // Its own signal, the run's landing queue (merge/landing-queue.ts keys it by the run's context).
  const attemptCtx: RunContext = { ...ctx, signal: AbortSignal.any([ctx.signal, pause.signal]), runContext: ctx.runContext ?? ctx };
  const lookForPause = async (): Promise<void> => {
    const paused = (await ctx.ledger.read()).state.paused;
    if (!paused) return;
    halt ??= { outcome: "halted", reason: `${pausedBy(paused)}: nothing more is claimed; factory resume, then start the run again` };
    if (paused.interrupt && !pause.signal.aborted) pause.abort(new Paused(paused));
    wake?.();
  };
  // While attempts run, a pause is looked for every few seconds (the loop itself looks before each claim).
  const pauseWatch = setInterval(() => void lookForPause().catch(() => undefined), PAUSE_POLL_MS);

  try {
    for (;;) {
      const seen = landingChanges;
      if (!halt && ctx.signal.aborted) halt = { outcome: "interrupted", reason: "interrupted" };
      if (!halt) await lookForPause();
      const exhausted = ctx.budget.windowMs === undefined ? ctx.budget.exhausted() : ctx.budget.exhausted((await ctx.ledger.read()).state);
      if (!halt && exhausted) halt = { outcome: "halted", reason: exhausted };
      const canClaim = !halt && !(options.once && attempts >= 1) && working() < options.concurrency;
      let next: Next | undefined;
      if (canClaim) {
        const read = await ctx.ledger.read();
        const broken = describeBreak(read);
        if (broken) {
          // Something other than the factory wrote the ledger during this run: nothing more is decided on it.
          halt ??= { outcome: "halted", reason: broken };
          continue;
        }
        const picked = await pickNext(ctx, options, read.state, inFlight, new Set([...tried, ...notClaimed]), (packet) => agentsOf(ctx, packet).some((agent) => waits.waiting(agent, Date.now())));
        next = picked.next;
        if (!next && running.size === 0 && ctx.claims && picked.elsewhere && !options.once) {
          // Several workers: what is left runs on others. Their leases may run out (a worker died), and their
          // landings may free what depends on them: wait for a wake-up or the poll, then look again.
          await ctx.claims.waitForWork(WORKER_POLL_MS, ctx.signal);
          await ctx.claims.recover();
          notClaimed.clear();
          continue;
        }
        if (!next && picked.waiting && running.size === 0) {
          const far = waits.beyond(Date.now(), ctx.config.limits.rateLimitWaitMs);
          if (far.length > 0 && (waits.nextEnd(Date.now()) ?? 0) - Date.now() > ctx.config.limits.rateLimitWaitMs) {
            // Every wait left is longer than a run sits out: what is left runs on a later run.
            benched = far.map((entry) => `agent "${entry.agent}" is rate-limited until ${new Date(entry.until).toISOString()}`).join("; ");
            break;
          }
          // Only packets whose agent waits out a rate limit are left: sleep until the first wait ends.
          await sleepUntil(waits.nextEnd(Date.now()) ?? Date.now(), ctx.signal);
          continue;
        }
      }
      if (next) {
        inFlight.add(next.packet.id);
        attempts++;
        const task = queue
          .add(async () => {
            const outcome = next.record?.pendingLand
              ? ((await landPending(attemptCtx, next.packet, next.record)) ?? ({ kind: "not-claimed", reason: "nothing to land" } as const))
              : await processPacket(attemptCtx, next.packet, next.record);
            await handle(next.packet, outcome);
          })
          .finally(() => {
            inFlight.delete(next.packet.id);
            running.delete(task);
          });
        running.add(task);
        continue;
      }
      if (running.size === 0) {
        // Pull-request mode: with nothing else to do, the open PRs are watched until they move or wait for a person.
        const watch = halt ? undefined : await watchReviews(ctx, options.packets);
        if (watch) {
          for (const { id, commit } of watch.merged) options.landed?.(id, commit);
          for (const entry of watch.blocked) {
            blocked.push(entry);
            if (!options.keepGoing) halt ??= { outcome: "halted", reason: `${entry.id} is blocked: ${entry.reason}` };
            ctx.notifier?.send({ event: "blocked", packet: entry.id, reason: entry.reason });
          }
          for (const line of [...watch.person, ...watch.notes].filter((entry) => !told.has(entry))) {
            told.add(line);
            ctx.emit({ kind: "notice", message: line });
          }
          if (watch.changed) {
            notClaimed.clear();
            continue;
          }
          if (watch.waiting.length > 0 && !ctx.signal.aborted) {
            await sleepUntil(Date.now() + (ctx.config.forge?.pollMs ?? 30_000), ctx.signal);
            continue;
          }
        }
        break;
      }
      if (landingChanges !== seen) continue; // an attempt began or ended waiting to land meanwhile: a worker may be free
      const stopPoll = new AbortController();
      // Several workers: a landing elsewhere may free a packet for a worker of this one that is idle.
      const polled = ctx.claims && working() < options.concurrency ? [ctx.claims.waitForWork(WORKER_POLL_MS, AbortSignal.any([ctx.signal, stopPoll.signal]))] : [];
      await Promise.race([...running, ...polled, new Promise<void>((resolve) => (wake = resolve))]);
      stopPoll.abort();
      wake = undefined;
    }
  } finally {
    stopWatching();
    clearInterval(pauseWatch);
  }
  if (halt) return halt;
  if (benched) {
    // The packets left to run (queued, not merged, held or blocked) whose agent waits.
    const { state } = await ctx.ledger.read();
    const left = (id: string): boolean => (state.packets.get(id)?.status.state ?? "queued") === "queued";
    const waiting = options.packets.filter((packet) => left(packet.id) && agentsOf(ctx, packet).some((agent) => waits.waiting(agent, Date.now())));
    return {
      outcome: "halted",
      reason: `the rest of the queue ran; ${benched}, further away than rate_limit_wait: ${waiting.map((packet) => packet.id).join(", ") || "its packets"} wait for a run after that${blocked.length ? `; blocked: ${blocked.map((entry) => entry.id).join(", ")}` : ""}`,
    };
  }
  if (blocked.length > 0) {
    const held = heldBehind(options.packets, new Set(blocked.map((entry) => entry.id)));
    return {
      outcome: "halted",
      reason: `the rest of the queue ran; blocked: ${blocked.map((entry) => entry.id).join(", ")}${held.length ? `; waiting on them: ${held.join(", ")}` : ""}`,
    };
  }
  return { outcome: "drained" };
}

/** How often running attempts look for `factory pause --interrupt`. */
const PAUSE_POLL_MS = 2_000;

/** How often an idle worker looks for claimable work when no notification woke it (a notification can be lost). */
const WORKER_POLL_MS = 3_000;

/** Pure: a block reason with packet ids, numbers and shas taken out, so the same cause on two packets compares equal. */
export function blockKey(reason: string): string {
  return reason
    .replace(/\b[0-9a-f]{7,40}\b/g, "<sha>")
    .replace(/\d+/g, "<n>")
    .replace(/\b[A-Z]+[-_]?<n>/g, "<id>");
}

/** Pure: the packets that depend, directly or not, on a blocked one. */
export function heldBehind(packets: readonly Packet[], blocked: ReadonlySet<string>): string[] {
  const held = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const packet of packets) {
      if (held.has(packet.id) || blocked.has(packet.id)) continue;
      if (packet.requires.some((dependency) => blocked.has(dependency) || held.has(dependency))) {
        held.add(packet.id);
        grew = true;
      }
    }
  }
  return [...held];
}

interface Next {
  packet: Packet;
  record: PacketRecord | undefined;
}

/** The first packet in plan order that is queued, has its dependencies merged and attempts left. */
async function pickNext(
  ctx: RunContext,
  options: SchedulerOptions,
  state: LedgerState,
  inFlight: ReadonlySet<string>,
  tried: ReadonlySet<string>,
  rateLimited: (packet: Packet) => boolean,
): Promise<{ next?: Next; waiting: boolean; elsewhere: boolean }> {
  let waiting = false;
  // Running, but not in this process: another worker has it (or had it, until its lease runs out).
  const elsewhere = [...state.packets.values()].some((record) => record.status.state === "running" && !inFlight.has(record.id));
  const byId = new Map(options.packets.map((packet) => [packet.id, packet]));
  const merged = new Set([...state.packets.values()].filter((record) => record.status.state === "merged" && !options.gone?.has(record.id)).map((record) => record.id));
  for (const placement of orderQueue(options.packets, { done: merged })) {
    if (placement.kind !== "ready") continue;
    const packet = byId.get(placement.id);
    if (!packet || inFlight.has(packet.id) || tried.has(packet.id)) continue;
    if (options.only !== undefined && packet.id !== options.only) continue;
    if (!packet.requires.every((dependency) => merged.has(dependency))) continue;
    const record = state.packets.get(packet.id);
    const changed = record?.sha256 !== undefined && record.sha256 !== packet.sha256;
    const status = record?.status.state ?? "queued";
    if (status === "merged" || status === "running") continue;
    if (status !== "queued" && !changed) continue;
    const allowed = packet.maxAttempts + (changed ? 0 : (record?.extraAttempts ?? 0));
    if (!changed && !record?.pendingLand && (record?.attemptsUsed ?? 0) >= allowed) {
      await ctx.ledger.append([{ kind: "blocked", packet: packet.id, reason: `out of attempts (${record?.attemptsUsed}/${allowed}); factory unblock ${packet.id} gives it more` }]);
      continue;
    }
    if (rateLimited(packet)) {
      waiting = true;
      continue;
    }
    return { next: { packet, record: changed ? undefined : record }, waiting, elsewhere };
  }
  return { waiting, elsewhere };
}

/** The agents a packet's attempt calls: its implementer's and its reviewer's. */
function agentsOf(ctx: RunContext, packet: Packet): string[] {
  return [...new Set([agentOf(ctx, packet.tier), agentOf(ctx, packet.reviewer)])];
}

function agentOf(ctx: RunContext, tier: string): string {
  return ctx.config.tiers.find((candidate) => candidate.name === tier)?.agent ?? tier;
}
