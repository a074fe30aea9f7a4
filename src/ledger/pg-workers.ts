import type { PgLedger } from "./pg-ledger.js";

/** A worker as `status` and the board show it: alive while its lease lasts on the server's clock, stale past it, or ended. */
export interface WorkerRow {
  name: string;
  host: string;
  pid: number;
  state: "alive" | "stale" | "ended";
  /** The packets it holds claims on, with their fences. */
  holds: { packet: string; attempt: number; fence: number }[];
  last_heartbeat: string;
  lease_until: string;
}

/** The workers the database knows, newest heartbeat first; ended ones only from the last day. */
export async function readWorkers(ledger: PgLedger): Promise<WorkerRow[]> {
  const schema = await ledger.query<{ found: string | null }>("SELECT to_regclass('factory_workers')::text AS found");
  if (!schema.rows[0]?.found) return [];
  const { rows } = await ledger.query<{ name: string; host: string; pid: number; heartbeat_at: Date; lease_until: Date; ended_at: Date | null; live: boolean }>(
    `SELECT name, host, pid, heartbeat_at, lease_until, ended_at, lease_until > now() AS live FROM factory_workers
     WHERE ended_at IS NULL OR ended_at > now() - interval '1 day' ORDER BY heartbeat_at DESC`,
  );
  const claims = await ledger.query<{ worker: string; packet: string; attempt: number; fence: string }>("SELECT worker, packet, attempt, fence FROM factory_claims ORDER BY packet");
  return rows.map((row) => ({
    name: row.name,
    host: row.host,
    pid: row.pid,
    state: row.ended_at ? "ended" : row.live ? "alive" : "stale",
    holds: claims.rows.filter((claim) => claim.worker === row.name).map((claim) => ({ packet: claim.packet, attempt: claim.attempt, fence: Number(claim.fence) })),
    last_heartbeat: row.heartbeat_at.toISOString(),
    lease_until: row.lease_until.toISOString(),
  }));
}
