import { treeOf } from "../git/repo.js";
import { landedCacheFile, landedIndex, landedPackets } from "../git/trailers.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import { type EventBody, eventPacket, stamp } from "../ledger/events.js";
import type { LedgerState } from "../ledger/fold.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Packet } from "../packet/types.js";
import { taskBranch, worktreePath } from "./context.js";
import { dropHeld } from "./held.js";

/**
 * Records as merged every queued packet whose current version the target's
 * history already carries (by its Factory-Packet trailers) while the ledger
 * does not say so: a fresh clone, a lost ledger, or a crash between moving
 * the target and recording the merge. Returns the ids it recorded. No packet
 * version lands twice.
 */
export async function recordLandedVersions(root: string, ledger: Ledger, branch: string, packets: readonly Packet[], state: LedgerState): Promise<string[]> {
  const events = await landedEvents(root, branch, packets, state);
  if (events.length === 0) return [];
  const recorded: string[] = [];
  for (const id of [...new Set(events.map((event) => eventPacket(event) ?? ""))]) {
    // Decided again in the transaction that writes it: a landing that recorded its own merge meanwhile (its
    // push made the trailer this saw) is not recorded twice.
    const sha256 = packets.find((packet) => packet.id === id)?.sha256;
    const skipped = await ledger.transaction(async (tx) => {
      const now = (await tx.read()).state.packets.get(id);
      if (now?.status.state === "merged" && now.sha256 === sha256) return true;
      await tx.append(events.filter((event) => eventPacket(event) === id).map((body) => stamp(body)));
      return false;
    });
    if (!skipped) recorded.push(id);
  }
  // What the landing would have removed, had it been recorded: the task worktree and branch.
  for (const id of recorded) {
    await removeWorktree(root, worktreePath(root, id));
    await deleteBranch(root, taskBranch(id));
    await dropHeld(root, id);
  }
  return recorded;
}

/** The events that record as merged every packet of `packets` whose current version the target's trailers carry and `state` does not call merged. */
export async function landedEvents(root: string, branch: string, packets: readonly Packet[], state: LedgerState): Promise<EventBody[]> {
  const landedAs = landedIndex(await landedPackets(root, branch, { cacheFile: landedCacheFile(root) }));
  const events: EventBody[] = [];
  for (const packet of packets) {
    const found = landedAs(packet.id, packet.sha256);
    const record = state.packets.get(packet.id);
    if (!found || (record?.status.state === "merged" && record.sha256 === packet.sha256)) continue;
    if (record?.sha256 !== packet.sha256) events.push({ kind: "packet-registered", packet: packet.id, sha256: packet.sha256, file: packet.file });
    events.push({ kind: "merged", packet: packet.id, attempt: record?.lastAttempt ?? 0, commit: found.commit, tree: await treeOf(root, found.commit) });
  }
  return events;
}
