import type { LedgerEvent } from "../ledger/events.js";

export interface RoleSpend {
  role: string;
  calls: number;
  usd: number;
  /** Calls whose cost was unknown and counted at the tier's estimate. */
  estimated: number;
}

/** Pure: what a packet's agent calls cost, per role, from its ledger events. */
export function spendByRole(events: readonly LedgerEvent[]): RoleSpend[] {
  const roles = new Map<string, RoleSpend>();
  for (const event of events) {
    if (event.kind !== "agent-finished") continue;
    const spend = roles.get(event.role) ?? { role: event.role, calls: 0, usd: 0, estimated: 0 };
    spend.calls++;
    spend.usd += event.costUsd ?? event.estimatedUsd ?? 0;
    if (event.costUsd === undefined && event.estimatedUsd !== undefined) spend.estimated++;
    roles.set(event.role, spend);
  }
  return [...roles.values()];
}

/** Pure: one line, e.g. "implementer $0.42 (3 calls), reviewer $1.00 (1 call, 1 at its estimate)". */
export function describeSpend(spends: readonly RoleSpend[]): string {
  return spends
    .map((spend) => `${spend.role} $${spend.usd.toFixed(2)} (${spend.calls} call${spend.calls === 1 ? "" : "s"}${spend.estimated ? `, ${spend.estimated} at its tier's estimate` : ""})`)
    .join(", ");
}
