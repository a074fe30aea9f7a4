import type pg from "pg";
import type { Project } from "../git/project.js";
import { type EventBody, type LedgerEvent, type Owner, stamp } from "./events.js";
import type { LedgerTransaction } from "./ledger.js";
import type { PgLedger } from "./pg-ledger.js";
import { pgModule } from "./pg-module.js";
import { bindProject } from "./pg-project.js";

/**
 * A worker's claims on the PostgreSQL ledger (DESIGN §16). A claim is a row
 * of `factory_claims` with a lease on the server's clock
 * (`lease_until = now() + lease`) and a fence from one sequence: every claim
 * and takeover draws a new one. Every event this worker writes about a
 * packet it claimed is written only while the row still carries its fence
 * (checked in the append's own transaction), and the event that ends the
 * attempt deletes the row in that transaction. The worker renews its leases
 * every third of the lease; a renewal that finds a row gone or re-fenced
 * means the claim is lost: its signal aborts the attempt's agents and gates,
 * and nothing more is written for it. A worker that died simply stops
 * renewing: once its lease has run out, any worker takes the packet over,
 * recording the dead attempt as interrupted (not spent).
 */
export interface WorkerClaims {
  readonly worker: string;
  readonly leaseMs: number;
  /**
   * Takes a claim inside the caller's ledger transaction (claim.ts), after
   * expired claims were given up: its fence, or undefined when another
   * worker's claim on the packet is live (a landing of gated work, which
   * leaves the packet queued in the ledger).
   */
  claim(client: pg.ClientBase, packet: string, attempt: number): Promise<number | undefined>;
  /** Who holds a live claim on the packet, if anyone (inside the caller's transaction). */
  holder(client: pg.ClientBase, packet: string): Promise<{ worker: string; fence: number } | undefined>;
  /** The claim's fence while this worker holds it. */
  fenceOf(packet: string): number | undefined;
  /** Aborted when the claim is lost (a renewal found it gone or taken over, or the database stayed away past the lease). */
  signalOf(packet: string): AbortSignal | undefined;
  /** Whether this worker held the packet and lost it. */
  lost(packet: string): boolean;
  /** Gives a claim back that ended without an event that ends it (a watched PR with nothing to record yet). */
  release(packet: string): Promise<void>;
  /** Checks, right before a landing moves the target, that the claim is still this worker's. */
  assertHeld(packet: string): Promise<void>;
  /** Renews every lease now (the timer does it every third of the lease). */
  renew(): Promise<{ lost: string[]; unreachable?: string }>;
  /** Gives up claims whose lease ran out, recording their attempts as interrupted: returns those packets. */
  recover(): Promise<string[]>;
  /**
   * Waits until the ledger may have changed: a `NOTIFY` from another worker's
   * append, or `ms` (the poll: a notification sent while this listener was
   * reconnecting is lost), or the signal. The caller then asks again what is
   * claimable; a notification is only ever a wake-up.
   */
  waitForWork(ms: number, signal: AbortSignal): Promise<void>;
  /** Stops renewing, gives up the claims still held and marks the worker ended. */
  stop(): Promise<void>;
}

/** The claim is no longer this worker's: the write is refused, and the attempt must stop without writing anything more. */
export class ClaimLost extends Error {
  constructor(
    readonly packet: string,
    detail: string,
  ) {
    super(`${packet}: this worker's claim is lost (${detail}); another worker has the packet, so nothing more is written or landed for this attempt`);
  }
}

/** Pure: whether an event ends the attempt a claim is for (the packet leaves `running` in the fold). */
export function endsClaim(event: EventBody): boolean {
  switch (event.kind) {
    case "attempt-interrupted":
    case "merged":
    case "held":
    case "asked":
    case "pr-opened":
    case "blocked":
    case "merge-blocked":
      return true;
    case "decided":
      return event.decision === "retry";
    default:
      return false;
  }
}

interface Held {
  fence: number;
  attempt: number;
  controller: AbortController;
}

interface ClaimsOptions {
  worker: string;
  owner: Owner;
  leaseMs: number;
  /** The project this worker serves: the database is bound to it, or refuses a worker of another (OtherProjectError) before anything is claimed. */
  project: Project;
  onLost?: (packet: string, why: string) => void;
  onUnreachable?: (message: string | undefined) => void;
}

type Renewal = { lost: string[]; unreachable?: string };

/**
 * Registers the worker (a heartbeat row), installs the fence check on every
 * append of `ledger`, and starts renewing. `onLost` hears of each claim lost.
 */
export async function startWorkerClaims(ledger: PgLedger, options: ClaimsOptions): Promise<WorkerClaims> {
  const { worker, owner, leaseMs } = options;
  await bindProject(ledger, options.project, `worker ${worker} on ${owner.host}`);
  await ledger.query(
    `INSERT INTO factory_workers (name, run, host, pid, lease_until) VALUES ($1, $2, $3, $4, now() + $5::interval)
     ON CONFLICT (name) DO UPDATE SET run = $2, host = $3, pid = $4, started_at = now(), heartbeat_at = now(), lease_until = now() + $5::interval, ended_at = NULL`,
    [worker, owner.run, owner.host, owner.pid, `${leaseMs} milliseconds`],
  );
  return new PgWorkerClaims(ledger, options);
}

class PgWorkerClaims implements WorkerClaims {
  readonly worker: string;
  readonly leaseMs: number;
  private readonly lease: string;
  private readonly held = new Map<string, Held>();
  /** Packets whose claim this worker lost, and the attempt it was for: that attempt's writes are refused from here on. */
  private readonly lostPackets = new Map<string, number>();
  /** The last renewal that reached the database, on this process's clock: past it by a lease, every claim is presumed lost. */
  private renewedAt = Date.now();
  private unreachableSince: number | undefined;
  private renewing: Promise<unknown> = Promise.resolve();
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly listener: ReturnType<typeof notificationListener>;

  constructor(
    private readonly ledger: PgLedger,
    private readonly options: ClaimsOptions,
  ) {
    this.worker = options.worker;
    this.leaseMs = options.leaseMs;
    this.lease = `${options.leaseMs} milliseconds`;
    ledger.guards.push(this.guard);
    this.timer = setInterval(
      () => {
        this.renewing = this.renewing.then(this.renewNow, this.renewNow);
      },
      Math.max(1_000, Math.floor(options.leaseMs / 3)),
    );
    this.timer.unref();
    this.listener = notificationListener(ledger.url);
  }

  recover(): Promise<string[]> {
    return this.ledger.locked((client, tx) => recoverExpired(client, tx));
  }

  waitForWork(ms: number, signal: AbortSignal): Promise<void> {
    return this.listener.wait(ms, signal);
  }

  async claim(client: pg.ClientBase, packet: string, attempt: number): Promise<number | undefined> {
    const { rows } = await client.query<{ fence: string }>("SELECT nextval('factory_fence') AS fence");
    const fence = Number(rows[0]?.fence);
    // Expired rows were deleted just before (recoverExpired): a row still there is someone's live claim.
    const inserted = await client.query(
      `INSERT INTO factory_claims (packet, attempt, fence, worker, run, lease_until) VALUES ($1, $2, $3, $4, $5, now() + $6::interval)
       ON CONFLICT (packet) DO NOTHING`,
      [packet, attempt, fence, this.worker, this.options.owner.run, this.lease],
    );
    if (inserted.rowCount === 0) return undefined;
    const previous = this.held.get(packet);
    previous?.controller.abort(new ClaimLost(packet, "claimed again"));
    this.held.set(packet, { fence, attempt, controller: new AbortController() });
    this.lostPackets.delete(packet);
    return fence;
  }

  async holder(client: pg.ClientBase, packet: string): Promise<{ worker: string; fence: number } | undefined> {
    const { rows } = await client.query<{ worker: string; fence: string }>("SELECT worker, fence FROM factory_claims WHERE packet = $1 AND lease_until > now()", [packet]);
    return rows[0] ? { worker: rows[0].worker, fence: Number(rows[0].fence) } : undefined;
  }

  async release(packet: string): Promise<void> {
    const claim = this.held.get(packet);
    if (!claim) return;
    this.held.delete(packet);
    try {
      await this.ledger.queryOnce("DELETE FROM factory_claims WHERE packet = $1 AND fence = $2", [packet, claim.fence]);
    } catch {
      // unreachable: the lease runs out by itself
    }
  }

  fenceOf(packet: string): number | undefined {
    return this.held.get(packet)?.fence;
  }

  signalOf(packet: string): AbortSignal | undefined {
    return this.held.get(packet)?.controller.signal;
  }

  lost(packet: string): boolean {
    return this.lostPackets.has(packet);
  }

  async assertHeld(packet: string): Promise<void> {
    const claim = this.held.get(packet);
    if (!claim) throw new ClaimLost(packet, "it was lost earlier in this run");
    const { rows } = await this.ledger.query<{ fence: string; live: boolean }>("SELECT fence, lease_until > now() AS live FROM factory_claims WHERE packet = $1", [packet]);
    if (Number(rows[0]?.fence) !== claim.fence || !rows[0]?.live) {
      const why = rows[0] ? (rows[0].live ? `taken over with fence ${rows[0].fence}` : "its lease ran out") : "its claim is gone";
      this.lose(packet, why);
      throw new ClaimLost(packet, why);
    }
  }

  renew(): Promise<Renewal> {
    this.renewing = this.renewing.then(this.renewNow, this.renewNow);
    return this.renewing as Promise<Renewal>;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.listener.close();
    await this.renewing.catch(() => undefined);
    const index = this.ledger.guards.indexOf(this.guard);
    if (index >= 0) this.ledger.guards.splice(index, 1);
    const { worker, owner } = this.options;
    try {
      await this.ledger.query("DELETE FROM factory_claims WHERE worker = $1 AND run = $2", [worker, owner.run]);
      await this.ledger.query("UPDATE factory_workers SET ended_at = now(), heartbeat_at = now() WHERE name = $1 AND run = $2", [worker, owner.run]);
    } catch {
      // unreachable: the leases run out by themselves
    }
  }

  private lose(packet: string, why: string): void {
    const claim = this.held.get(packet);
    if (!claim) return;
    this.held.delete(packet);
    this.lostPackets.set(packet, claim.attempt);
    claim.controller.abort(new ClaimLost(packet, why));
    this.options.onLost?.(packet, why);
  }

  /**
   * Recovery's record of an expired claim is a takeover write, anyone's to make: this worker's own lost claim included.
   * A lost claim refuses only its own attempt's writes: a later attempt's (another worker's PR, watched here) are not the lost holder's.
   */
  private holderWrite(event: LedgerEvent): boolean {
    if (event.kind === "claimed" || !("packet" in event) || RECOVERED.has(event)) return false;
    const packet = (event as { packet: string }).packet;
    if (this.held.has(packet)) return true;
    const lostAttempt = this.lostPackets.get(packet);
    return lostAttempt !== undefined && (event as { attempt?: number }).attempt === lostAttempt;
  }

  /** The fence check on every append (in its transaction); an event that ends an attempt deletes its claim row there. */
  private readonly guard = async (client: pg.ClientBase, events: readonly LedgerEvent[]): Promise<(() => void) | undefined> => {
    const checked = [...new Set(events.filter((event) => this.holderWrite(event)).map((event) => (event as { packet: string }).packet))];
    if (checked.length === 0) return undefined;
    for (const packet of checked) {
      const claim = this.held.get(packet);
      if (!claim) throw new ClaimLost(packet, "it was lost earlier in this run");
      const { rows } = await client.query<{ fence: string }>("SELECT fence FROM factory_claims WHERE packet = $1 FOR UPDATE", [packet]);
      if (Number(rows[0]?.fence) !== claim.fence) {
        const why = rows[0] ? `the packet was taken over with fence ${rows[0].fence}; this worker's was ${claim.fence}` : `its claim (fence ${claim.fence}) ran out and was removed`;
        this.lose(packet, why);
        throw new ClaimLost(packet, why);
      }
    }
    const ended = [...new Set(events.filter((event) => endsClaim(event) && checked.includes((event as { packet: string }).packet)).map((event) => (event as { packet: string }).packet))];
    for (const packet of ended) await client.query("DELETE FROM factory_claims WHERE packet = $1 AND fence = $2", [packet, this.held.get(packet)?.fence]);
    // After the commit: the attempt is over, its claim given back; later events of the packet are anyone's.
    return ended.length > 0
      ? () => {
          for (const packet of ended) this.held.delete(packet);
        }
      : undefined;
  };

  /** One renewal of every lease held, and of the worker's heartbeat. */
  private readonly renewNow = async (): Promise<Renewal> => {
    const { held } = this;
    const packets = [...held.keys()];
    const fences = packets.map((packet) => held.get(packet)?.fence ?? 0);
    try {
      const { rows } = await this.ledger.queryOnce<{ packet: string }>(
        `UPDATE factory_claims SET lease_until = now() + $2::interval
         FROM unnest($3::text[], $4::bigint[]) AS mine(packet, fence)
         WHERE factory_claims.worker = $1 AND factory_claims.packet = mine.packet AND factory_claims.fence = mine.fence
         RETURNING factory_claims.packet`,
        [this.worker, this.lease, packets, fences],
      );
      await this.ledger.queryOnce("UPDATE factory_workers SET heartbeat_at = now(), lease_until = now() + $2::interval WHERE name = $1", [this.worker, this.lease]);
      this.renewedAt = Date.now();
      if (this.unreachableSince !== undefined) this.options.onUnreachable?.(undefined);
      this.unreachableSince = undefined;
      const renewed = new Set(rows.map((row) => row.packet));
      const lost = packets.filter((packet) => held.has(packet) && !renewed.has(packet));
      for (const packet of lost) this.lose(packet, "a renewal found its claim gone or taken over (its lease ran out while this worker was away)");
      return { lost };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (this.unreachableSince === undefined) {
        this.unreachableSince = Date.now();
        this.options.onUnreachable?.(message);
      }
      // Agents go on only while the lease could still be good on the server; past it, another worker may have the packet.
      const lost = Date.now() - this.renewedAt >= this.leaseMs ? [...held.keys()] : [];
      for (const packet of lost) this.lose(packet, `the ledger database was unreachable for longer than the lease (${message})`);
      return { lost, unreachable: message };
    }
  };
}

/**
 * Claims whose lease ran out (their worker died, stalled or lost the
 * database), each recorded as an interrupted attempt (not spent) and removed,
 * in the caller's ledger transaction: the packets are claimable again.
 */
export async function recoverExpired(client: pg.ClientBase, tx: LedgerTransaction): Promise<string[]> {
  const { rows } = await client.query<{ packet: string; attempt: number; worker: string; fence: string; lease_until: Date }>(
    "DELETE FROM factory_claims WHERE lease_until < now() RETURNING packet, attempt, worker, fence, lease_until",
  );
  const live = await client.query<{ packet: string }>("SELECT packet FROM factory_claims");
  const claimed = new Set(live.rows.map((row) => row.packet));
  const expired = new Map(rows.map((row) => [row.packet, row]));
  const { state } = await tx.read();
  const events: EventBody[] = [];
  for (const record of state.packets.values()) {
    const status = record.status;
    if (status.state !== "running" || claimed.has(record.id)) continue;
    const row = expired.get(record.id);
    // An attempt running in the ledger with no live claim: its worker's lease ran out (or, imported from a file ledger, it never had one).
    events.push({
      kind: "attempt-interrupted",
      packet: record.id,
      attempt: status.attempt,
      reason: row
        ? `worker ${row.worker} stopped renewing its claim (fence ${row.fence}); its lease ran out at ${row.lease_until.toISOString()}`
        : `no worker holds a claim on it (the run of pid ${status.owner.pid} on ${status.owner.host} ended without finishing it)`,
    });
  }
  const stamped = events.map((body) => stamp(body));
  for (const event of stamped) RECOVERED.add(event);
  if (stamped.length > 0) await tx.append(stamped);
  return events.map((event) => (event as { packet: string }).packet);
}

/** The events recoverExpired writes: never a claim holder's write, so no holder's fence (or lost claim) stops them. */
const RECOVERED = new WeakSet<LedgerEvent>();

/**
 * `LISTEN factory_ledger` on a connection of its own, opened when first
 * waited on and opened again (with backoff) after it broke.
 */
function notificationListener(url: string): { wait(ms: number, signal: AbortSignal): Promise<void>; close(): Promise<void> } {
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let failures = 0;
  let retryAt = 0;
  const waiters = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of [...waiters]) wake();
  };
  const connect = async (): Promise<void> => {
    if (client || Date.now() < retryAt) return;
    const next = new (pgModule().Client)({ connectionString: url, application_name: "factory-listen" });
    next.on("notification", wakeAll);
    next.on("error", () => {
      if (client === next) client = undefined;
      next.end().catch(() => undefined);
      wakeAll(); // a broken listener may have missed a notification: the caller asks again
    });
    try {
      await next.connect();
      await next.query("LISTEN factory_ledger");
      client = next;
      failures = 0;
    } catch {
      failures += 1;
      retryAt = Date.now() + Math.min(30_000, 500 * 2 ** failures);
      await next.end().catch(() => undefined);
    }
  };
  return {
    async wait(ms, signal) {
      connecting ??= connect().finally(() => {
        connecting = undefined;
      });
      await connecting;
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done, { once: true });
        waiters.add(done);
      });
    },
    async close() {
      wakeAll();
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    },
  };
}
