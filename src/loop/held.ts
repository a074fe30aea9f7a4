import { dropHeld, type HeldRecord, keepHeld, readHeld, shareHeld } from "../git/held-refs.js";
import { type EventBody, eventPacket } from "../ledger/events.js";
import type { LedgerState } from "../ledger/fold.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Packet } from "../packet/types.js";
import { taskBranch } from "./context.js";

export { dropHeld, readHeld };

/** After an attempt is held for a person: the attempt and its ledger events kept in git too (git/held-refs.ts). */
export async function keepHeldAttempt(root: string, ledger: Ledger, packet: Packet, held: { attempt: number; commit: string; fork: string; tree: string }, remote?: string): Promise<void> {
  const history = (await ledger.history()).state.packets.get(packet.id);
  const events = (history?.events ?? [])
    .filter((event) => "attempt" in event && event.attempt === held.attempt && event.kind !== "held")
    .map(({ v: _v, ts: _ts, ...body }) => body as Record<string, unknown>);
  await keepHeld(root, { packet: packet.id, sha256: packet.sha256, ...held, events });
  if (!remote) return;
  const refused = await shareHeld(root, packet.id, remote);
  if (refused) throw new Error(`the held attempt could not be pushed to ${remote}, so only this clone can approve it: ${refused}`);
}

/**
 * Records as held every packet whose current version git keeps held while the
 * ledger does not know it (a ledger deleted, or moved aside): the held
 * attempt's own events, then the hold, so `status` shows it and `approve`
 * lands it, without the work being done and paid for again. Returns the ids.
 */
export async function recordHeldVersions(root: string, ledger: Ledger, read: { packets: () => Promise<readonly Packet[]>; state: () => Promise<LedgerState> }): Promise<string[]> {
  const held = await readHeld(root);
  if (held.length === 0) return []; // the usual case: the queue and the ledger are not read for it
  const events = heldEvents(held, await read.packets(), await read.state());
  if (events.length > 0) await ledger.append(events);
  return [...new Set(events.map((event) => eventPacket(event) ?? ""))];
}

/**
 * Pure: the events that record as held every record of `held` (git's) for a
 * packet's current version that `state` does not know in that version (held,
 * merged, or anything after it: then the ledger's word stands).
 */
export function heldEvents(held: readonly HeldRecord[], packets: readonly Packet[], state: LedgerState): EventBody[] {
  return held.flatMap((record) => {
    const packet = packets.find((candidate) => candidate.id === record.packet);
    const known = state.packets.get(record.packet);
    if (!packet || packet.sha256 !== record.sha256) return [];
    if (known && known.sha256 === record.sha256 && (known.lastAttempt ?? 0) >= record.attempt) return [];
    return restored(record, packet);
  });
}

function restored(record: HeldRecord, packet: Packet): EventBody[] {
  return [
    { kind: "packet-registered", packet: packet.id, sha256: packet.sha256, file: packet.file },
    ...(record.events as unknown as EventBody[]),
    { kind: "held", packet: packet.id, attempt: record.attempt, tree: record.tree, branch: taskBranch(packet.id), commit: record.commit, fork: record.fork },
  ];
}
