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
  return new Drain(ctx, options).run();
}

/** What one turn of the loop found to do: start an attempt, look again, stop, or nothing to claim. */
type Turn = { start: Next } | "again" | "stop" | undefined;

/** One drain of the queue: what its turns share (what runs, what was tried, why it stops). */
class Drain {
  private readonly landings: ReturnType<typeof landingQueue>;
  private readonly slack: number;
  private readonly queue: PQueue;
  private landingChanges = 0;
  private wake: (() => void) | undefined;
  private readonly inFlight = new Set<string>();
  private readonly tried = new Set<string>(); // merge-blocked this run: not picked again
  private readonly notClaimed = new Set<string>(); // another worker had it: not picked again until the ledger changed
  private readonly running = new Set<Promise<void>>();
  private halt: RunEnd | undefined;
  /** What the halting policy remembers between outcomes (haltAfter). */
  private memory: HaltMemory = { environmentErrors: 0, lastBlock: undefined };
  private attempts = 0;
  private readonly blocked: { id: string; reason: string }[] = [];
  private readonly told = new Set<string>(); // PRs said once to wait for a person
  private benched: string | undefined; // the run ended with only packets of agents rate-limited past rate_limit_wait left
  /** `factory pause --interrupt` stops the running attempts (recorded interrupted, unspent): they run under this too. */
  private readonly pause = new AbortController();
  /** The attempts' context: its own signal, the run's landing queue (merge/landing-queue.ts keys it by the run's context). */
  private readonly attemptCtx: RunContext;

  constructor(
    private readonly ctx: RunContext,
    private readonly options: SchedulerOptions,
  ) {
    this.landings = landingQueue(ctx);
    this.slack = Math.max(1, ctx.config.merge.batch);
    this.queue = new PQueue({ concurrency: options.concurrency + this.slack });
    this.attemptCtx = { ...ctx, signal: AbortSignal.any([ctx.signal, this.pause.signal]), runContext: ctx.runContext ?? ctx };
  }

  async run(): Promise<RunEnd> {
    const stopWatching = this.landings.onChange(() => {
      this.landingChanges++;
      this.wake?.();
    });
    // While attempts run, a pause is looked for every few seconds (the loop itself looks before each claim).
    const pauseWatch = setInterval(() => void this.lookForPause().catch(() => undefined), PAUSE_POLL_MS);
    try {
      await this.turns();
    } finally {
      stopWatching();
      clearInterval(pauseWatch);
    }
    return this.end();
  }

  /** Attempts running in this process, not counting those parked in the landing queue. */
  private working(): number {
    return this.inFlight.size - Math.min(this.landings.parked, this.slack);
  }

  private async turns(): Promise<void> {
    for (;;) {
      const seen = this.landingChanges;
      await this.lookForHalts();
      const turn = !this.halt && !(this.options.once && this.attempts >= 1) && this.working() < this.options.concurrency ? await this.claimTurn() : undefined;
      if (turn === "again") continue;
      if (turn === "stop") break;
      if (turn) {
        this.start(turn.start);
        continue;
      }
      if (this.running.size === 0) {
        if (await this.watchPullRequests()) continue;
        break;
      }
      if (this.landingChanges !== seen) continue; // an attempt began or ended waiting to land meanwhile: a worker may be free
      await this.waitForAnEnd();
    }
  }

  /** An interrupt, a pause, the spend cap. */
  private async lookForHalts(): Promise<void> {
    const { ctx } = this;
    if (!this.halt && ctx.signal.aborted) this.halt = { outcome: "interrupted", reason: "interrupted" };
    if (!this.halt) await this.lookForPause();
    const exhausted = ctx.budget.windowMs === undefined ? ctx.budget.exhausted() : ctx.budget.exhausted((await ctx.ledger.read()).state);
    if (!this.halt && exhausted) this.halt = { outcome: "halted", reason: exhausted };
  }

  private async lookForPause(): Promise<void> {
    const paused = (await this.ctx.ledger.read()).state.paused;
    if (!paused) return;
    this.halt ??= { outcome: "halted", reason: `${pausedBy(paused)}: nothing more is claimed; factory resume, then start the run again` };
    if (paused.interrupt && !this.pause.signal.aborted) this.pause.abort(new Paused(paused));
    this.wake?.();
  }

  /** The next packet to start, or a wait: for other workers, or for a rate limit to end. */
  private async claimTurn(): Promise<Turn> {
    const { ctx, options, waits } = this;
    const read = await ctx.ledger.read();
    const broken = describeBreak(read);
    if (broken) {
      // Something other than the factory wrote the ledger during this run: nothing more is decided on it.
      this.halt ??= { outcome: "halted", reason: broken };
      return "again";
    }
    const picked = await pickNext(ctx, options, read.state, this.inFlight, new Set([...this.tried, ...this.notClaimed]), (packet) =>
      agentsOf(ctx, packet).some((agent) => waits.waiting(agent, Date.now())),
    );
    if (picked.next) return { start: picked.next };
    if (this.running.size === 0 && ctx.claims && picked.elsewhere && !options.once) {
      // Several workers: what is left runs on others. Their leases may run out (a worker died), and their
      // landings may free what depends on them: wait for a wake-up or the poll, then look again.
      await ctx.claims.waitForWork(WORKER_POLL_MS, ctx.signal);
      await ctx.claims.recover();
      this.notClaimed.clear();
      return "again";
    }
    if (picked.waiting && this.running.size === 0) {
      const far = waits.beyond(Date.now(), ctx.config.limits.rateLimitWaitMs);
      if (far.length > 0 && (waits.nextEnd(Date.now()) ?? 0) - Date.now() > ctx.config.limits.rateLimitWaitMs) {
        // Every wait left is longer than a run sits out: what is left runs on a later run.
        this.benched = far.map((entry) => `agent "${entry.agent}" is rate-limited until ${new Date(entry.until).toISOString()}`).join("; ");
        return "stop";
      }
      // Only packets whose agent waits out a rate limit are left: sleep until the first wait ends.
      await sleepUntil(waits.nextEnd(Date.now()) ?? Date.now(), ctx.signal);
      return "again";
    }
    return undefined;
  }

  private get waits(): RunContext["waits"] {
    return this.ctx.waits;
  }

  private start(next: Next): void {
    this.inFlight.add(next.packet.id);
    this.attempts++;
    const task = this.queue
      .add(async () => {
        const outcome = next.record?.pendingLand
          ? ((await landPending(this.attemptCtx, next.packet, next.record)) ?? ({ kind: "not-claimed", reason: "nothing to land" } as const))
          : await processPacket(this.attemptCtx, next.packet, next.record);
        await this.handle(next.packet, outcome);
      })
      .finally(() => {
        this.inFlight.delete(next.packet.id);
        this.running.delete(task);
      });
    this.running.add(task);
  }

  /** Pull-request mode: with nothing else to do, the open PRs are watched until they move or wait for a person. Whether to look again. */
  private async watchPullRequests(): Promise<boolean> {
    const { ctx, options } = this;
    const watch = this.halt ? undefined : await watchReviews(ctx, options.packets);
    if (!watch) return false;
    for (const { id, commit } of watch.merged) options.landed?.(id, commit);
    for (const entry of watch.blocked) {
      this.blocked.push(entry);
      if (!options.keepGoing) this.halt ??= { outcome: "halted", reason: `${entry.id} is blocked: ${entry.reason}` };
      ctx.notifier?.send({ event: "blocked", packet: entry.id, reason: entry.reason });
    }
    for (const line of [...watch.person, ...watch.notes].filter((entry) => !this.told.has(entry))) {
      this.told.add(line);
      ctx.emit({ kind: "notice", message: line });
    }
    if (watch.changed) {
      this.notClaimed.clear();
      return true;
    }
    if (watch.waiting.length > 0 && !ctx.signal.aborted) {
      await sleepUntil(Date.now() + (ctx.config.forge?.pollMs ?? 30_000), ctx.signal);
      return true;
    }
    return false;
  }

  /** Until an attempt ends, the landing queue changes, a pause is found, or (several workers) the ledger may have freed a packet. */
  private async waitForAnEnd(): Promise<void> {
    const { ctx } = this;
    const stopPoll = new AbortController();
    // Several workers: a landing elsewhere may free a packet for a worker of this one that is idle.
    const polled = ctx.claims && this.working() < this.options.concurrency ? [ctx.claims.waitForWork(WORKER_POLL_MS, AbortSignal.any([ctx.signal, stopPoll.signal]))] : [];
    await Promise.race([...this.running, ...polled, new Promise<void>((resolve) => (this.wake = resolve))]);
    stopPoll.abort();
    this.wake = undefined;
  }

  /** A rate limit is the agent's: the agent a packet's limited call ran on, and how long it now waits. */
  private limitAgent(packet: Packet, limited: { role: "implementer" | "reviewer"; resetsAt?: string }) {
    const { ctx } = this;
    const agent = agentOf(ctx, limited.role === "implementer" ? packet.tier : packet.reviewer);
    return { agent, wait: this.waits.limit(agent, limited.resetsAt, Date.now(), ctx.config.limits.rateLimitWaitMs, ctx.config.limits.rateLimitMaxWaits) };
  }

  private benchNotice(packet: string, agent: string, until: number): void {
    this.ctx.emit({
      kind: "notice",
      packet,
      message: `agent "${agent}" reports a rate limit until ${new Date(until).toISOString()}, further away than rate_limit_wait: its packets wait for a later run; the rest of the queue goes on`,
    });
  }

  /** What an attempt's outcome means for the run: a halt, a wait, a notice. */
  private async handle(packet: Packet, outcome: PacketOutcome): Promise<void> {
    const { ctx, options } = this;
    const after = haltAfter(packet.id, outcome, this.memory, options.keepGoing);
    this.memory = after.memory;
    if (after.halt) this.halt ??= { outcome: "halted", reason: after.halt };
    if (!(outcome.kind === "retry" && outcome.rateLimited)) for (const agent of agentsOf(ctx, packet)) this.waits.clear(agent);
    switch (outcome.kind) {
      case "blocked":
        this.onBlocked(packet, outcome);
        break;
      case "held":
        ctx.notifier?.send({ event: "awaiting_human", packet: packet.id });
        break;
      case "asked":
        ctx.notifier?.send({ event: "question", packet: packet.id, question: outcome.question, suggestions: outcome.suggestions });
        break;
      case "retry":
        this.onRetry(packet, outcome);
        break;
      case "interrupted":
        this.halt ??= ctx.signal.aborted ? { outcome: "interrupted", reason: outcome.reason } : { outcome: "halted", reason: outcome.reason };
        break;
      case "merge-blocked":
        this.tried.add(packet.id);
        break;
      case "not-claimed":
        this.notClaimed.add(packet.id);
        break;
      case "merged":
        options.landed?.(packet.id, outcome.commit);
        ctx.notifier?.send({ event: "merged", packet: packet.id, commit: outcome.commit });
        break;
      case "in-review":
        break;
    }
  }

  private onBlocked(packet: Packet, outcome: Extract<PacketOutcome, { kind: "blocked" }>): void {
    this.blocked.push({ id: packet.id, reason: outcome.reason });
    if (outcome.rateLimited) {
      const { agent, wait } = this.limitAgent(packet, outcome.rateLimited);
      if (!("halt" in wait) && wait.beyond) this.benchNotice(packet.id, agent, wait.until);
    }
    this.ctx.notifier?.send({ event: "blocked", packet: packet.id, reason: outcome.reason });
  }

  private onRetry(packet: Packet, outcome: Extract<PacketOutcome, { kind: "retry" }>): void {
    if (!outcome.rateLimited) return;
    const { agent, wait } = this.limitAgent(packet, outcome.rateLimited);
    if ("halt" in wait) this.halt ??= { outcome: "halted", reason: wait.halt };
    else if (wait.beyond) this.benchNotice(packet.id, agent, wait.until);
    else {
      const source = outcome.rateLimited.resetsAt ? "the reset it reported" : "backing off";
      this.ctx.emit({
        kind: "notice",
        packet: packet.id,
        message: `rate-limited: agent "${agent}" waits until ${new Date(wait.until).toISOString()} (${source}; no attempt spent); every packet on it waits too`,
      });
    }
  }

  /** How the run ended: its halt, the rate limits it left to a later run, or the packets it blocked. */
  private async end(): Promise<RunEnd> {
    const { ctx, options, blocked } = this;
    if (this.halt) return this.halt;
    if (this.benched) {
      // The packets left to run (queued, not merged, held or blocked) whose agent waits.
      const { state } = await ctx.ledger.read();
      const left = (id: string): boolean => (state.packets.get(id)?.status.state ?? "queued") === "queued";
      const waiting = options.packets.filter((packet) => left(packet.id) && agentsOf(ctx, packet).some((agent) => this.waits.waiting(agent, Date.now())));
      return {
        outcome: "halted",
        reason: `the rest of the queue ran; ${this.benched}, further away than rate_limit_wait: ${waiting.map((packet) => packet.id).join(", ") || "its packets"} wait for a run after that${blocked.length ? `; blocked: ${blocked.map((entry) => entry.id).join(", ")}` : ""}`,
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
}

/** What the halting policy remembers between outcomes, in the order they arrive. */
export interface HaltMemory {
  /** Environment errors in a row. */
  environmentErrors: number;
  /** The last packet's block (its blockKey), when it was not the packet's own fault. */
  lastBlock: string | undefined;
}

/**
 * Pure: whether an attempt's outcome halts the queue, and what is remembered after it. A block halts it unless
 * the run keeps going (an alarm halts it even then), and so do two blocks in a row for one cause that is not the
 * packets' own (the machine or the spec, not the work) and two environment errors in a row.
 */
export function haltAfter(id: string, outcome: PacketOutcome, memory: HaltMemory, keepGoing: boolean): { halt?: string; memory: HaltMemory } {
  const environmentErrors = outcome.kind === "retry" && outcome.environment ? memory.environmentErrors + 1 : 0;
  if (outcome.kind === "retry") {
    const halt = environmentErrors >= 2 ? "two environment errors in a row: the machine is broken, not the work (see the gate and install logs)" : undefined;
    return { ...(halt ? { halt } : {}), memory: { ...memory, environmentErrors } };
  }
  if (outcome.kind === "merged" || outcome.kind === "held") return { memory: { environmentErrors, lastBlock: undefined } };
  if (outcome.kind !== "blocked") return { memory: { ...memory, environmentErrors } };
  // A packet at fault itself says nothing about the machine: it never counts toward two blocks in a row.
  const same = outcome.packetFault ? undefined : blockKey(outcome.reason);
  const next = { environmentErrors, lastBlock: same };
  if (!keepGoing || outcome.alarm) return { halt: `${id} is blocked: ${outcome.reason}`, memory: next };
  if (same !== undefined && memory.lastBlock === same)
    return { halt: `two packets in a row blocked for the same reason (the machine or the spec, not the work): ${id}: ${outcome.reason}`, memory: next };
  return { memory: next };
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
