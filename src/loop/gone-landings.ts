import { describeRemoved, removedLandings } from "../git/removed.js";
import { describeUndone, undoneLandings } from "../git/undone.js";
import type { LedgerState } from "../ledger/fold.js";

/** A merged packet whose landing the target no longer has, and what a person reads about it. */
export interface GoneLanding {
  packet: string;
  commit: string;
  text: string;
}

/**
 * The landings of merged packets the target no longer has: undone by a later
 * commit (every file back as before), or removed from its history (a
 * force-push, a reset). The remote is the authority: these are never shown
 * as plain merged, and what requires them is not claimed. A landing a person
 * acknowledged as gone on purpose is left out.
 */
export async function goneLandings(root: string, tip: string, branch: string, state: LedgerState): Promise<GoneLanding[]> {
  const merged = [...state.packets.values()].flatMap((record) => (record.status.state === "merged" ? [{ packet: record.id, commit: record.status.commit }] : []));
  if (merged.length === 0) return [];
  const [undone, removed] = await Promise.all([undoneLandings(root, tip, new Set(merged.map((landing) => landing.packet))), removedLandings(root, tip, merged)]);
  const gone = [
    ...removed.map((landing) => ({ packet: landing.packet, commit: landing.commit, text: describeRemoved(landing, branch) })),
    ...undone.map((landing) => ({ packet: landing.packet, commit: landing.commit, text: describeUndone(landing, branch) })),
  ];
  return gone.filter((landing) => state.packets.get(landing.packet)?.goneAcknowledged?.commit !== landing.commit);
}
