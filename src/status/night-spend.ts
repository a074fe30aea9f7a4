import { type Tier, UNKNOWN_COST_ESTIMATE_USD } from "../config/types.js";
import type { LedgerState } from "../ledger/fold.js";
import { fleetSpend } from "../loop/budget.js";
import type { Packet } from "../packet/types.js";

/** The night's spend as `status` shows it (`--json`: `spend`). */
export interface SpendView {
  /** The cap's window in hours, when the cap is the fleet's (a shared ledger, or `[limits] max_cost_window`). */
  window_hours: number | null;
  /** Spent in the window (everything recorded, without one). */
  spent_usd: number;
  /** Held by agent calls in flight (every worker's). */
  reserved_usd: number;
  cap_usd: number | null;
  /** The queued packets, and what one attempt each costs at their tiers' recorded averages (a tier's estimate_usd before it has any). */
  queued: number;
  queue_usd: number;
}

/** Pure: spent, reserved and the queue's forecast, from the ledger's fold and the config's tiers. */
export function spendView(input: {
  state: Pick<LedgerState, "spentByHour" | "openCalls" | "tierCosts" | "costUsd">;
  queued: readonly Pick<Packet, "tier" | "reviewer">[];
  tiers: readonly Pick<Tier, "name" | "estimateUsd">[];
  capUsd: number | undefined;
  windowMs: number | undefined;
  now: number;
}): SpendView {
  const { state } = input;
  const windowed = input.windowMs === undefined ? undefined : fleetSpend(state, input.windowMs, input.now);
  const reservedUsd = Object.values(state.openCalls).reduce((sum, call) => sum + call.reservedUsd, 0);
  const perCall = (name: string): number => {
    const recorded = state.tierCosts[name];
    if (recorded && recorded.calls > 0) return recorded.usd / recorded.calls;
    return input.tiers.find((tier) => tier.name === name)?.estimateUsd ?? UNKNOWN_COST_ESTIMATE_USD;
  };
  const queueUsd = input.queued.reduce((sum, packet) => sum + perCall(packet.tier) + perCall(packet.reviewer), 0);
  return {
    window_hours: input.windowMs === undefined ? null : input.windowMs / 3_600_000,
    spent_usd: round(windowed?.spentUsd ?? state.costUsd),
    reserved_usd: round(reservedUsd),
    cap_usd: input.capUsd ?? null,
    queued: input.queued.length,
    queue_usd: round(queueUsd),
  };
}

/** Pure: the line `status` prints. */
export function spendLine(spend: SpendView): string {
  const spent = spend.window_hours === null ? `spent $${spend.spent_usd.toFixed(2)} in all` : `spent $${spend.spent_usd.toFixed(2)} in the last ${spend.window_hours}h`;
  const cap = spend.cap_usd === null ? "" : ` of a $${spend.cap_usd.toFixed(2)} cap`;
  const reserved = spend.reserved_usd > 0 ? `, $${spend.reserved_usd.toFixed(2)} reserved by calls in flight` : "";
  const queue = spend.queued > 0 ? `; the ${spend.queued} queued packet(s): about $${spend.queue_usd.toFixed(2)} more, one attempt each at their tiers' recorded averages` : "";
  return `Spend: ${spent}${cap}${reserved}${queue}.`;
}

function round(usd: number): number {
  return Math.round(usd * 100) / 100;
}
