import type { Ledger } from "../ledger/ledger.js";

/**
 * Called while holding the run lock: any packet the ledger shows in flight
 * belongs to a run that no longer exists. Its attempt is recorded as
 * interrupted (not counted) and the packet becomes claimable again; its
 * worktree is kept for inspection until the next attempt replaces it.
 */
export async function recoverInFlight(ledger: Ledger, currentRun: string): Promise<string[]> {
  const { state } = await ledger.read();
  const recovered: string[] = [];
  for (const record of state.packets.values()) {
    if (record.status.state !== "running" || record.status.owner.run === currentRun) continue;
    const { owner, attempt } = record.status;
    await ledger.append([
      {
        kind: "attempt-interrupted",
        packet: record.id,
        attempt,
        reason: `the run that owned it (pid ${owner.pid} on ${owner.host}) ended without finishing it`,
      },
    ]);
    recovered.push(record.id);
  }
  return recovered;
}
