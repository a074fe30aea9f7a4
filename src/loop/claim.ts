import { existsSync } from "node:fs";
import { type LedgerEvent, type Owner, stamp } from "../ledger/events.js";
import type { PacketRecord } from "../ledger/fold.js";
import type { Ledger, LedgerTransaction } from "../ledger/ledger.js";
import { isPgLedger } from "../ledger/open.js";
import { recoverExpired, type WorkerClaims } from "../ledger/pg-claims.js";
import type { Packet } from "../packet/types.js";
import { crashPoint } from "../util/crash-point.js";
import { attemptDir } from "./context.js";

export type Claim = { ok: true; attempt: number; fence?: number } | { ok: false; reason: string };

/**
 * Claims a packet for one attempt, atomically under the ledger lock: the
 * packet must still be queued. A new version of the packet file is
 * registered first, so nothing ruled on the old version counts. On the
 * PostgreSQL ledger the claim is also a leased, fenced row (pg-claims.ts),
 * taken in the same transaction, after any claim whose lease ran out was
 * given up (its attempt recorded as interrupted).
 */
export async function claimPacket(root: string, ledger: Ledger, packet: Packet, owner: Owner, claims?: WorkerClaims): Promise<Claim> {
  if (claims && isPgLedger(ledger)) {
    return ledger.locked(async (client, tx) => {
      await recoverExpired(client, tx);
      return claimIn(root, tx, packet, owner, async (attempt) => {
        const fence = await claims.claim(client, packet.id, attempt);
        return fence === undefined ? { busy: await busyReason(client, claims, packet.id) } : { fence, worker: claims.worker };
      });
    });
  }
  return ledger.transaction((tx) => claimIn(root, tx, packet, owner));
}

/**
 * Claims gated work that waited to land (a `merge-blocked` packet), on the
 * PostgreSQL ledger: a leased, fenced row like an attempt's, with no
 * `claimed` event (no attempt is spent), so only one worker lands it and the
 * landing names its fence. The file ledger needs none: its run lock and the
 * landing lock already make the landing one process's.
 */
export async function claimLanding(ledger: Ledger, packet: Packet, claims?: WorkerClaims): Promise<Claim> {
  if (!claims || !isPgLedger(ledger)) return { ok: true, attempt: 0 };
  return ledger.locked(async (client, tx) => {
    await recoverExpired(client, tx);
    const pending = (await tx.read()).state.packets.get(packet.id)?.pendingLand;
    if (!pending) return { ok: false, reason: `${packet.id} has no gated work waiting to land` };
    const fence = await claims.claim(client, packet.id, pending.attempt);
    if (fence === undefined) return { ok: false, reason: await busyReason(client, claims, packet.id) };
    return { ok: true, attempt: pending.attempt, fence };
  });
}

/**
 * Claims a held packet for its approval, on the PostgreSQL ledger: a leased,
 * fenced row with no `claimed` event, so an approval on one machine and an
 * approval or rejection of the same packet on another exclude each other, and
 * the landing names its fence. The file ledger's landing lock does this on one
 * machine.
 */
export async function claimHeld(ledger: Ledger, packet: string, commit: string, claims?: WorkerClaims): Promise<Claim> {
  return claimWhile(ledger, packet, claims, (status) =>
    status?.state === "awaiting_human" && status.commit === commit
      ? { attempt: status.attempt, busy: "" }
      : { refused: `${packet} is ${status?.state ?? "queued"} now, no longer the held attempt you saw` },
  );
}

/**
 * Claims a packet in review for one look at its pull request, on the
 * PostgreSQL ledger: a leased, fenced row with no `claimed` event, so of
 * several workers watching the same PRs one calls the forge about it (and
 * merges it) at a time, and what it records is written under its fence. The
 * caller gives it back when the look recorded nothing. The file ledger's run
 * lock makes the watch one process's.
 */
export async function claimWatch(ledger: Ledger, packet: string, head: string, claims?: WorkerClaims): Promise<Claim> {
  return claimWhile(ledger, packet, claims, (status) =>
    status?.state === "in_review" && status.head === head
      ? { attempt: status.attempt, busy: `, which looks at PR #${status.number} meanwhile` }
      : { refused: `${packet} is ${status?.state ?? "queued"} now, no longer the PR head you saw` },
  );
}

/**
 * A leased, fenced claim with no `claimed` event (PostgreSQL only), taken while `check` finds the packet as the
 * caller saw it: the attempt to claim it for and what to add when another worker holds it, or why not.
 */
async function claimWhile(
  ledger: Ledger,
  packet: string,
  claims: WorkerClaims | undefined,
  check: (status: PacketRecord["status"] | undefined) => { attempt: number; busy: string } | { refused: string },
): Promise<Claim> {
  if (!claims || !isPgLedger(ledger)) return { ok: true, attempt: 0 };
  return ledger.locked(async (client, tx) => {
    await recoverExpired(client, tx);
    const found = check((await tx.read()).state.packets.get(packet)?.status);
    if ("refused" in found) return { ok: false, reason: found.refused };
    const fence = await claims.claim(client, packet, found.attempt);
    if (fence === undefined) return { ok: false, reason: `${await busyReason(client, claims, packet)}${found.busy}` };
    return { ok: true, attempt: found.attempt, fence };
  });
}

/**
 * Runs `action` in one ledger transaction, unless (on PostgreSQL) someone holds a live claim on `packet`
 * (an approval landing it on another machine): then says who, doing nothing.
 */
export async function whileUnclaimed(ledger: Ledger, packet: string, action: (tx: LedgerTransaction) => Promise<string | undefined>): Promise<string | undefined> {
  if (!isPgLedger(ledger)) return ledger.transaction(action);
  return ledger.locked(async (client, tx) => {
    const { rows } = await client.query<{ worker: string }>("SELECT worker FROM factory_claims WHERE packet = $1 AND lease_until > now()", [packet]);
    return rows[0] ? `being approved and landed by ${rows[0].worker}` : action(tx);
  });
}

async function busyReason(client: Parameters<WorkerClaims["holder"]>[0], claims: WorkerClaims, packet: string): Promise<string> {
  const holder = await claims.holder(client, packet);
  return holder ? `${packet} is claimed by worker ${holder.worker} (fence ${holder.fence})` : `${packet} is claimed by another worker`;
}

async function claimIn(root: string, tx: LedgerTransaction, packet: Packet, owner: Owner, lease?: (attempt: number) => Promise<{ fence: number; worker: string } | { busy: string }>): Promise<Claim> {
  const { state } = await tx.read();
  const record = state.packets.get(packet.id);
  const events: LedgerEvent[] = [];
  if (record?.sha256 !== packet.sha256) {
    events.push(stamp({ kind: "packet-registered", packet: packet.id, sha256: packet.sha256, file: packet.file }));
  }
  const changed = record?.sha256 !== undefined && record.sha256 !== packet.sha256;
  let status = record?.status.state ?? "queued";
  // The fold re-queues a new version of anything but merged or running work (see fold.ts).
  if (changed && status !== "merged" && status !== "running") status = "queued";
  if (status !== "queued") return { ok: false, reason: `${packet.id} is ${status}` };
  // Attempt numbers are never reused: a run directory is never overwritten.
  let attempt = (record?.lastAttempt ?? 0) + 1;
  while (existsSync(attemptDir(root, packet.id, attempt))) attempt++;
  const leased = lease ? await lease(attempt) : undefined;
  if (leased && "busy" in leased) return { ok: false, reason: leased.busy };
  events.push(stamp({ kind: "claimed", packet: packet.id, attempt, sha256: packet.sha256, ...owner, ...(leased ?? {}) }));
  await tx.append(events);
  crashPoint("run-after-claim");
  return { ok: true, attempt, ...(leased ? { fence: leased.fence } : {}) };
}
