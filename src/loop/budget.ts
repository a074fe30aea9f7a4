import { hourOf, type LedgerState } from "../ledger/fold.js";

/**
 * The spend against `--max-cost` / `[limits] max_cost_usd`, checked before
 * every claim and agent call. Without a window it is this run's own (a count
 * kept in this process, as one machine's night). With a window (`[limits]
 * max_cost_window`, and always on a shared ledger) it is the fleet's: what
 * the ledger records as spent in the window by every worker, plus every call
 * in flight at its reservation, read in the same ledger transaction that
 * records the next call's start, so N workers cannot spend N times the cap.
 */
export class Budget {
  private spent = 0;

  constructor(
    readonly capUsd: number | undefined,
    /** The fleet's window (ms): the cap covers every worker's spend in the last this-long. */
    readonly windowMs?: number,
  ) {}

  add(costUsd: number | undefined): void {
    this.spent += costUsd ?? 0;
  }

  /** What this process spent. */
  get spentUsd(): number {
    return this.spent;
  }

  /** Why no more may be spent, or undefined while there is budget left; with a window, from the ledger's state. */
  exhausted(state?: LedgerState, now: number = Date.now()): string | undefined {
    if (this.capUsd === undefined) return undefined;
    if (this.windowMs === undefined || !state) {
      if (this.spent < this.capUsd) return undefined;
      return `the cost cap of $${this.capUsd.toFixed(2)} is reached ($${this.spent.toFixed(2)} spent this run)`;
    }
    const { spentUsd, reservedUsd } = fleetSpend(state, this.windowMs, now);
    if (spentUsd + reservedUsd < this.capUsd) return undefined;
    return `the cost cap of $${this.capUsd.toFixed(2)} for the last ${describeWindow(this.windowMs)} is reached across every worker ($${spentUsd.toFixed(2)} spent, $${reservedUsd.toFixed(2)} reserved by calls in flight)`;
  }
}

/**
 * Pure: what the ledger says the fleet spent in the window ending `now`
 * (by the hour: an hour that began inside the window counts whole), and what
 * the calls in flight reserved.
 */
export function fleetSpend(state: Pick<LedgerState, "spentByHour" | "openCalls">, windowMs: number, now: number): { spentUsd: number; reservedUsd: number } {
  const from = hourOf(new Date(now - windowMs).toISOString());
  let spentUsd = 0;
  for (const [hour, usd] of Object.entries(state.spentByHour)) if (hour >= from) spentUsd += usd;
  const reservedUsd = Object.values(state.openCalls).reduce((sum, call) => sum + call.reservedUsd, 0);
  return { spentUsd, reservedUsd };
}

function describeWindow(ms: number): string {
  const hours = ms / 3_600_000;
  return Number.isInteger(hours) ? `${hours}h` : `${Math.round(ms / 60_000)}m`;
}

/** The window of a shared ledger's cost cap unless `[limits] max_cost_window` says otherwise: a night. */
export const FLEET_COST_WINDOW_MS = 12 * 3_600_000;

/** Thrown before an agent call when the cap is reached: the attempt is interrupted, not decided. */
export class BudgetExhausted extends Error {}
