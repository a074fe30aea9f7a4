import { resolveCommit } from "../git/repo.js";
import type { PgLandings } from "../ledger/pg-landings.js";
import { withLandLock } from "../ledger/store.js";
import { Interrupted, type RunContext } from "../loop/context.js";
import { crashPoint } from "../util/crash-point.js";
import { type BatchVerdict, gateBatch } from "./batch.js";
import { landThroughFleet } from "./fleet-landing.js";
import { mayArriveBy, regateEstimate } from "./gather.js";
import { type LandInput, type LandResult, land } from "./land.js";

/** One attempt of the run, from its start to its end (landed or not): `end` says it ended. */
export { mayArriveBy, regateEstimate } from "./gather.js";

export interface Flight {
  readonly started: number;
  /** When it asked to land, once it has. */
  arrived?: number;
  end(): void;
}

interface Waiting {
  input: LandInput;
  apply: (landed: LandResult) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A run's landings: one at a time under the landing lock, each with its
 * outcome recorded before the next (as before); where several gated attempts
 * are waiting when the lock is taken, at most `[merge] batch` of them, in the
 * order they became ready, are first gated together on their combination
 * (merge/batch.ts), so that each then lands without a re-gate of its own.
 *
 * Before it takes the lock, a landing that would need a re-gate (the target
 * moved since its attempt began) waits for the run's other attempts in
 * flight to arrive, for at most as long as its own command gates took: its
 * re-gate would cost about that, so the wait costs no more, and those that
 * arrive meanwhile land with one gating of the whole batch. It waits only
 * while one of them may arrive in that time: begun at least as long before
 * the deadline as the run's quickest attempt took from its start to asking
 * to land (an attempt that began a moment ago, where attempts take minutes,
 * would only delay the landing by the whole wait).
 *
 * On the PostgreSQL ledger a run's landings go through the fleet's landing
 * queue instead (merge/fleet-landing.ts): the same batching, across every
 * worker, with one lander at a time.
 */
export class LandingQueue {
  private readonly waiting: Waiting[] = [];
  private draining = false;
  private readonly flights = new Set<Flight>();
  /** The quickest any attempt of the run took from its start to asking to land. */
  private quickest = Number.POSITIVE_INFINITY;
  private wake: (() => void) | undefined;
  private gathering = false;
  private landingNow = false;
  /** Attempts waiting in the fleet's landing queue. */
  private fleetParked = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly ctx: RunContext) {}

  /** An attempt of the run has begun; call the flight's `end` when it has ended (landed or not). */
  begin(): Flight {
    const flight: Flight = {
      started: Date.now(),
      end: () => {
        if (!this.flights.delete(flight)) return;
        this.wake?.();
      },
    };
    this.flights.add(flight);
    return flight;
  }

  private get inFlight(): number {
    return this.flights.size;
  }

  /** Lands `input` (alone or in a batch) and hands the result to `apply`, under the landing lock; resolves to what `apply` returns. */
  land<T>(input: LandInput, apply: (landed: LandResult) => Promise<T>, flight?: Flight): Promise<T> {
    if (flight && flight.arrived === undefined) {
      flight.arrived = Date.now();
      this.quickest = Math.min(this.quickest, flight.arrived - flight.started);
    }
    if (this.ctx.landings && this.ctx.config.target.mode !== "pull-request") return this.viaFleet(this.ctx.landings, input, apply);
    return this.here(input, apply);
  }

  /** Lands it through this run's own queue. */
  private here<T>(input: LandInput, apply: (landed: LandResult) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ input, apply, resolve: resolve as (value: unknown) => void, reject });
      this.changed();
      this.wake?.();
      void this.drain();
    });
  }

  /** On the PostgreSQL ledger: through the fleet's landing queue, parked (its worker free) until the fleet's lander has landed it. */
  private async viaFleet<T>(landings: PgLandings, input: LandInput, apply: (landed: LandResult) => Promise<T>): Promise<T> {
    const landed = await landThroughFleet(this.ctx, landings, input, (parked) => {
      this.fleetParked += parked ? 1 : -1;
      this.changed();
    });
    if (!landed) return this.here(input, apply);
    return withLandLock(this.ctx.root, () => apply(landed));
  }

  /**
   * How many gated attempts are parked: waiting for others to join their
   * batch, or behind a landing under way. Their agents and gates are done,
   * so their workers may start other packets meanwhile. An attempt that
   * lands at once is never parked: the next one starts from its landing.
   */
  get parked(): number {
    return (this.gathering || this.landingNow ? this.waiting.length : 0) + this.fleetParked;
  }

  /** Calls `listener` whenever the number parked may have changed; returns how to stop. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.waiting.length > 0) {
        try {
          await this.gather();
          await withLandLock(this.ctx.root, async () => {
            this.landingNow = true;
            this.changed();
            try {
              await this.landNext();
            } finally {
              this.landingNow = false;
              this.changed();
            }
          });
        } catch (error) {
          for (const entry of this.waiting.splice(0)) entry.reject(error); // the lock or git failed before any landing: nobody can land
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Waits for more of the run's attempts to arrive when the first waiting one would re-gate alone (see above). */
  private async gather(): Promise<void> {
    const size = this.ctx.config.merge.batch;
    const first = this.waiting[0];
    if (!first || size < 2 || this.inFlight <= this.waiting.length) return;
    if ((await resolveCommit(this.ctx.root, this.ctx.branch)) === first.input.fork) return; // it lands as gated: nothing to save
    const wait = regateEstimate(first.input);
    const deadline = Date.now() + wait;
    if (!this.mayArrive(deadline)) return; // none of those in flight can come in time: the wait would be lost
    this.ctx.emit({
      kind: "step",
      packet: first.input.packet.id,
      attempt: first.input.attempt,
      step: "waiting",
      detail: `up to ${(wait / 1000).toFixed(1)} s for attempts in flight to join its merge batch (its re-gate alone would take about that)`,
    });
    this.gathering = true;
    this.changed();
    try {
      await this.gatherUntil(size, deadline);
    } finally {
      this.gathering = false;
      this.changed();
    }
  }

  private async gatherUntil(size: number, deadline: number): Promise<void> {
    while (this.waiting.length < size && this.inFlight > this.waiting.length && Date.now() < deadline && this.mayArrive(deadline) && !this.ctx.signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.ctx.signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, deadline - Date.now()); // done, not resolve: no abort listener is left behind
        this.wake = done;
        this.ctx.signal.addEventListener("abort", done, { once: true });
      });
      this.wake = undefined;
    }
  }

  /** Whether an attempt in flight that has not asked to land may ask by `deadline` (see the class comment). */
  private mayArrive(deadline: number): boolean {
    return mayArriveBy([...this.flights], this.quickest, deadline);
  }

  private async landNext(): Promise<void> {
    const batch = this.waiting.splice(0, Math.max(1, this.ctx.config.merge.batch));
    let verdict: BatchVerdict | undefined;
    if (batch.length > 1) {
      try {
        verdict = await gateBatch(
          this.ctx,
          batch.map((entry) => entry.input),
        );
      } catch (error) {
        if (error instanceof Interrupted) {
          for (const entry of batch) entry.reject(error);
          return;
        }
        // A batch is only ever a saving: without it each lands as it would alone.
        this.ctx.emit({ kind: "notice", message: `the merge batch could not be gated (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); landing one at a time` });
      }
    }
    // The outcomes are handed back once the whole batch has landed: a worker freed by one then starts its
    // next attempt from the batch's last landing, whose baseline the batch's results seeded, not from one
    // in between that would have to be measured.
    const settled: (() => void)[] = [];
    // Members after a red batch's culprit land later, gated again without it: back to the front, in order.
    const deferred = batch.filter((entry) => verdict?.deferred.includes(entry.input.packet.id));
    this.waiting.unshift(...deferred);
    const covered = verdict?.covered;
    const broken = verdict?.broken;
    for (const entry of batch.filter((one) => !deferred.includes(one))) {
      try {
        const input = {
          ...entry.input,
          ...(covered?.size ? { covered } : {}),
          ...(broken && broken.packet === entry.input.packet.id ? { broken: { tree: broken.tree, reports: broken.reports, packets: broken.packets } } : {}),
        };
        const outcome = await entry.apply(await land(this.ctx, input));
        settled.push(() => entry.resolve(outcome));
        if (verdict?.green && settled.length === 1) crashPoint("batch-after-first-landing"); // the rest of a green batch not landed yet
      } catch (error) {
        settled.push(() => entry.reject(error));
      }
    }
    for (const settle of settled) settle();
  }
}

const queues = new WeakMap<RunContext, LandingQueue>();

/** The landing queue of a run. */
export function landingQueue(packetCtx: RunContext): LandingQueue {
  // One queue per run: a packet's own context (its claim's signal joined in) lands through the run's.
  const ctx = packetCtx.runContext ?? packetCtx;
  let queue = queues.get(ctx);
  if (!queue) {
    queue = new LandingQueue(ctx);
    queues.set(ctx, queue);
  }
  return queue;
}
