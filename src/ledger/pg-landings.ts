import type { PgLedger } from "./pg-ledger.js";

/** A candidate in the fleet's landing queue, as its row holds it. */
export interface QueuedLanding {
  id: number;
  packet: string;
  attempt: number;
  fence: number;
  worker: string;
  candidate: unknown;
}

/** A claim whose attempt has not asked to land yet: how long ago it was claimed, by the database's clock. */
export interface ClaimInFlight {
  packet: string;
  ageMs: number;
}

/**
 * The fleet's landing queue in the PostgreSQL ledger (issue 56): rows of
 * `factory_landings`, one per gated attempt ready to land, and one lander
 * at a time, a lease in `factory_lander` on the server's clock (a killed
 * lander's lease runs out; nothing else frees it). The lander lands the
 * rows and writes each one's result; the candidate's own worker reads it
 * and records it in the ledger under its claim. Rows are kept as history.
 */
export class PgLandings {
  constructor(
    private readonly ledger: PgLedger,
    readonly worker: string,
    private readonly run: string,
    readonly leaseMs: number,
  ) {}

  /** Queues a candidate (again, for an attempt queued before: its old result is forgotten); returns its row. */
  async enqueue(entry: Omit<QueuedLanding, "id">): Promise<number> {
    await this.ledger.migrate();
    const { rows } = await this.ledger.query<{ id: string }>(
      `INSERT INTO factory_landings (packet, attempt, fence, worker, candidate, claimed_at)
       VALUES ($1, $2, $3, $4, $5, coalesce((SELECT claimed_at FROM factory_claims WHERE packet = $1), now()))
       ON CONFLICT (packet, attempt) DO UPDATE SET fence = EXCLUDED.fence, worker = EXCLUDED.worker, candidate = EXCLUDED.candidate,
         claimed_at = EXCLUDED.claimed_at, ready_at = now(), result = NULL, landed_by = NULL, done_at = NULL
       RETURNING id`,
      [entry.packet, entry.attempt, entry.fence, entry.worker, JSON.stringify(entry.candidate)],
    );
    return Number(rows[0]?.id);
  }

  /** The row's result once a lander wrote it. */
  async result(id: number): Promise<unknown | undefined> {
    const { rows } = await this.ledger.query<{ result: unknown; done: boolean }>("SELECT result, done_at IS NOT NULL AS done FROM factory_landings WHERE id = $1", [id]);
    return rows[0]?.done ? rows[0].result : undefined;
  }

  /** Takes the row back while no lander has settled it: whether it was still waiting. */
  async withdraw(id: number): Promise<boolean> {
    const { rowCount } = await this.ledger.query("DELETE FROM factory_landings WHERE id = $1 AND done_at IS NULL", [id]);
    return (rowCount ?? 0) > 0;
  }

  /** Every candidate waiting, oldest first. */
  async waiting(): Promise<QueuedLanding[]> {
    const { rows } = await this.ledger.query<{ id: string; packet: string; attempt: number; fence: string; worker: string; candidate: unknown }>(
      "SELECT id, packet, attempt, fence, worker, candidate FROM factory_landings WHERE done_at IS NULL ORDER BY id",
    );
    return rows.map((row) => ({ ...row, id: Number(row.id), fence: Number(row.fence) }));
  }

  /** Writes a row's result (only once). */
  async settle(id: number, result: unknown): Promise<void> {
    await this.ledger.query("UPDATE factory_landings SET result = $2, landed_by = $3, done_at = now() WHERE id = $1 AND done_at IS NULL", [id, JSON.stringify(result), this.worker]);
  }

  /** Takes the lander's lease, or renews it: whether this worker holds it now. */
  async takeLander(): Promise<boolean> {
    await this.ledger.migrate();
    const { rows } = await this.ledger.query(
      `INSERT INTO factory_lander (worker, run, lease_until) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (only_one) DO UPDATE SET worker = EXCLUDED.worker, run = EXCLUDED.run, lease_until = EXCLUDED.lease_until
       WHERE factory_lander.lease_until < now() OR (factory_lander.worker = EXCLUDED.worker AND factory_lander.run = EXCLUDED.run)
       RETURNING worker`,
      [this.worker, this.run, this.leaseMs],
    );
    return rows.length > 0;
  }

  async releaseLander(): Promise<void> {
    await this.ledger.query("DELETE FROM factory_lander WHERE worker = $1 AND run = $2", [this.worker, this.run]);
  }

  /** Whether the claim on `packet` is live with exactly `fence` (the candidate's worker still holds it). */
  async claimCurrent(packet: string, fence: number): Promise<{ ok: true } | { ok: false; why: string }> {
    const { rows } = await this.ledger.query<{ fence: string; live: boolean }>("SELECT fence, lease_until > now() AS live FROM factory_claims WHERE packet = $1", [packet]);
    const row = rows[0];
    if (row && Number(row.fence) === fence && row.live) return { ok: true };
    return { ok: false, why: row ? (row.live ? `taken over with fence ${row.fence}` : "its lease ran out") : "its claim is gone" };
  }

  /** Live claims whose attempt has not asked to land: attempts that may yet join a batch. */
  async inFlight(): Promise<ClaimInFlight[]> {
    const { rows } = await this.ledger.query<{ packet: string; age: number }>(
      `SELECT c.packet, extract(epoch FROM now() - c.claimed_at) * 1000 AS age FROM factory_claims c
       WHERE c.lease_until > now() AND NOT EXISTS (SELECT 1 FROM factory_landings l WHERE l.packet = c.packet AND l.attempt = c.attempt)`,
    );
    return rows.map((row) => ({ packet: row.packet, ageMs: Number(row.age) }));
  }

  /** The quickest any attempt of the fleet took from its claim to asking to land, in ms (none yet: Infinity). */
  async quickest(): Promise<number> {
    const { rows } = await this.ledger.query<{ quickest: number | null }>("SELECT min(extract(epoch FROM ready_at - claimed_at)) * 1000 AS quickest FROM factory_landings");
    const value = rows[0]?.quickest;
    return value === null || value === undefined ? Number.POSITIVE_INFINITY : Number(value);
  }
}
