import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type pg from "pg";
import { DEFAULT_LEASE_MS } from "../config/types.js";
import { stopPoint } from "../util/crash-point.js";
import { type EventBody, eventPacket, type LedgerEvent, stamp } from "./events.js";
import { emptyState, foldInto, type LedgerState, type PacketHistory } from "./fold.js";
import type { Ledger, LedgerTransaction, LedgerView } from "./ledger.js";
import { pgModule } from "./pg-module.js";
import { LOCK, migrate, NewerSchemaError, schemaState } from "./pg-schema.js";
import { maskSecrets, maskUrl } from "./pg-url.js";
import { chainHash, LedgerScanner, SCAN_START, type ScanPosition } from "./scan.js";
import { FOLD_VERSION, isSavedState, loadSnapshotFile, restoredState, type SavedState, SNAPSHOT_AFTER_EVENTS, savedState, saveSnapshotFile } from "./snapshot.js";

/** How a warning or a break names an event of the database: its number, which is its place in the chain. */
export function eventLine(number: number): string {
  return `ledger event ${number}`;
}

/**
 * A check run inside an append's transaction, before its events are written
 * (claims.ts: a holder's events are written only while its fence is current).
 * It throws to refuse the append; the transaction is then rolled back.
 */
export type AppendGuard = (client: pg.ClientBase, events: readonly LedgerEvent[]) => Promise<(() => void) | undefined>;

/** The PostgreSQL ledger, with what the claims need beside the `Ledger` interface. */
export interface PgLedger extends Ledger {
  readonly url: string;
  /** Runs `action` in a transaction of its own, holding the ledger's advisory lock (appends, claims). */
  locked<T>(action: (client: pg.ClientBase, tx: LedgerTransaction) => Promise<T>): Promise<T>;
  /** Runs a statement on a connection of the pool, outside any transaction (waiting out an unreachable database as reads do). */
  query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<T>>;
  /** The same, failing at once when the database cannot be reached (a lease renewal must know). */
  queryOnce<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<T>>;
  /** Checks run in every append's transaction. */
  guards: AppendGuard[];
  /**
   * How long a read or an append waits for an unreachable database (a
   * restart, a network cut) before it fails: 0 (the default: a command says
   * so at once); a run's workers wait, so a restart loses and doubles nothing.
   */
  waitWhenUnreachable(ms: number, onWait?: (message: string) => void): void;
  /** Brings the schema up to date (once per process; every write does it first). */
  migrate(): Promise<{ from: number; to: number }>;
  close(): Promise<void>;
}

interface Checkpoint {
  /** The id of the last event folded (ids are dense: event N is the chain's line N). */
  lastId: number;
  position: ScanPosition;
  state: LedgerState;
  warnings: string[];
}

/** A checkpoint kept on this machine for the next process (`snapshot`), of the database it names. */
interface SnapshotFile extends SavedState {
  format: "factory-pg-ledger-snapshot";
  fold: number;
  /** The database's URL without its password: a snapshot of another database is never read. */
  database: string;
  lastId: number;
  position: ScanPosition;
  warnings: string[];
  /** `prefixSum` of the events up to `lastId`: an event rewritten before the last one makes the snapshot untrusted. */
  prefixSum: string;
}

/**
 * The ledger in PostgreSQL (DESIGN §16): events are rows, each holding the
 * exact JSON line the file would (its `prev` naming the hash of the line
 * before), numbered densely from 1. An append takes
 * `pg_advisory_xact_lock`, reads the last hash and inserts in the same
 * transaction (and `prev` is unique, so even a writer that skipped the lock
 * could not fork the chain). Reads go on from the last event folded, after
 * checking that event still hashes the same (a database restored from an
 * older backup, or rewritten, is folded again from the start and its chain
 * judged). The same scanner as the file's checks every line. With `snapshot` (a file on this machine), a
 * read that folded many events leaves its checkpoint there, and a new process starts from it once the database
 * still holds, unchanged, every event it covers: `status` on a long ledger does not fold it all again.
 */
export function pgLedger(url: string, options: PgLedgerOptions = {}): PgLedger {
  const db = new PgEvents(url, options);
  const locked = <T>(action: (client: pg.ClientBase, tx: LedgerTransaction, committed: (() => void)[]) => Promise<T>): Promise<T> => db.locked(action);
  return {
    url,
    guards: db.guards,
    where: maskUrl(url),
    append: (bodies) => db.append(bodies),
    waitWhenUnreachable: (ms, listener) => db.waitWhenUnreachable(ms, listener),
    read: () => db.patiently(() => db.withClient((client) => db.readWith(client, true, true))),
    verify: () => db.patiently(() => db.withClient((client) => db.verifyWith(client))),
    history: () => db.patiently(() => db.historyOnce()),
    version: () => db.patiently(() => db.versionOnce()),
    transaction: (action) => locked((_client, tx) => action(tx)),
    lines: () => db.lines(),
    importLines: (lines) => db.importLines(lines),
    locked,
    query: (text, values) => db.patiently(() => db.withClient((client) => client.query(text, values))),
    queryOnce: (text, values) => db.withClient((client) => client.query(text, values)),
    migrate: () => db.ensureSchema(),
    close: () => db.close(),
  };
}

export interface PgLedgerOptions {
  poolSize?: number;
  /** The file this machine keeps its fold in for the next process. */
  snapshot?: string;
  /**
   * How long the server lets a transaction of this process sit idle before it ends the session (`openLedger`:
   * the workers' lease): a worker frozen inside a transaction (a paused VM, a suspended laptop) holds the
   * ledger's lock, and with it every other worker, no longer than its claims. The factory's transactions wait on
   * nothing but the database and a fold; one cut off is retried as after any lost connection.
   */
  idleTransactionMs?: number;
}

/** The pool, the fold's checkpoint and the patience of one PostgreSQL ledger: what `pgLedger`'s methods share. */
class PgEvents {
  readonly guards: AppendGuard[] = [];
  private readonly pool: pg.Pool;
  private memory: Checkpoint | undefined;
  private migrated: Promise<{ from: number; to: number }> | undefined;
  private patienceMs = 0;
  private onWait: ((message: string) => void) | undefined;
  /**
   * When the database was first found unreachable, with no call reaching it since: the patience bounds the
   * outage as a whole, not each call (ten calls waiting in turn would otherwise wait ten times as long).
   */
  private outageSince: number | undefined;
  /** The patience ran out in this outage: every call fails at once until one reaches the database. */
  private gaveUp = false;

  private readonly snapshot: string | undefined;

  constructor(
    private readonly url: string,
    options: PgLedgerOptions,
  ) {
    this.snapshot = options.snapshot;
    this.pool = new (pgModule().Pool)({
      connectionString: url,
      max: options.poolSize ?? 4,
      idle_in_transaction_session_timeout: options.idleTransactionMs ?? DEFAULT_LEASE_MS,
      // A command's process may end while the pool still has idle connections.
      allowExitOnIdle: true,
      connectionTimeoutMillis: 10_000,
      application_name: "factory",
    });
    // An idle connection the server dropped (a restart) must not crash the process: the next query reconnects.
    this.pool.on("error", () => undefined);
    // So must a connection dropped while checked out between two queries: no listener of the pool's is on it then,
    // and an unheard 'error' would end the process. The query that next uses it fails, and withClient discards it.
    this.pool.on("connect", (client) => client.on("error", () => undefined));
  }

  waitWhenUnreachable(ms: number, listener: ((message: string) => void) | undefined): void {
    this.patienceMs = ms;
    this.onWait = listener;
  }

  /** Runs `attempt`, again after a connection failure, with backoff, for as long as the patience allows. */
  async patiently<T>(attempt: () => Promise<T>): Promise<T> {
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        const result = await attempt();
        this.outageSince = undefined;
        this.gaveUp = false;
        return result;
      } catch (error) {
        if (!(error instanceof LedgerUnreachable)) throw error;
        this.outageSince ??= Date.now();
        if (this.gaveUp || Date.now() + delay > this.outageSince + this.patienceMs) {
          this.gaveUp = this.patienceMs > 0;
          throw error.after(Date.now() - this.outageSince);
        }
        this.onWait?.(error.message);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async withClient<T>(action: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new LedgerUnreachable(this.url, error);
    }
    let broken = false;
    try {
      return await action(client);
    } catch (error) {
      broken = isConnectionError(error);
      if (broken) throw new LedgerUnreachable(this.url, error);
      throw error;
    } finally {
      client.release(broken);
    }
  }

  ensureSchema(): Promise<{ from: number; to: number }> {
    this.migrated ??= this.withClient((client) => migrate(client)).catch((error) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  /** Whether the schema is there to read; a database never written is an empty ledger. */
  private async readable(client: pg.ClientBase): Promise<boolean> {
    const schema = await schemaState(client);
    if (schema.kind === "newer") throw new NewerSchemaError(schema.version);
    return schema.kind !== "absent" && schema.version > 0;
  }

  /**
   * The fold, going on from the checkpoint (when `trustMemory` and its last event still hashes the same; a new
   * process's from the snapshot), else from the start. `keep`: a long fold is left in the snapshot; only a read
   * outside any transaction keeps one (a transaction's read may hold its own events, not yet committed, and holds
   * the ledger's lock, which the snapshot's writing would lengthen).
   */
  async readWith(client: pg.ClientBase, trustMemory = true, keep = false): Promise<LedgerView> {
    if (!(await this.readable(client))) {
      this.memory = undefined;
      return { state: emptyState(), warnings: [], version: "0:" };
    }
    let base = trustMemory ? (this.memory ?? (await this.loadSnapshot(client))) : undefined;
    const from = base?.lastId ?? 0;
    const { rows } = await client.query<{ id: string; line: string; hash: string }>("SELECT id, line, hash FROM factory_events WHERE id >= $1 ORDER BY id", [Math.max(1, from)]);
    let start = 0;
    if (base && from > 0) {
      // The event the fold ended on must still be there, unchanged: else the ledger was rewound or rewritten.
      if (rows[0] && Number(rows[0].id) === from && rows[0].hash === base.position.lastHash && chainHash(rows[0].line) === rows[0].hash) start = 1;
      else return this.readWith(client, false, keep);
    }
    base ??= { lastId: 0, position: SCAN_START, state: emptyState(), warnings: [] };
    const events: LedgerEvent[] = [];
    const scanner = new LedgerScanner(base.position, (event) => events.push(event), eventLine);
    let lastId = base.lastId;
    for (const row of rows.slice(start)) {
      const id = Number(row.id);
      if (id !== lastId + 1) {
        // A missing number is a removed event: the chain would say so too, but here the number says where.
        scanner.warnings.push(`${eventLine(lastId + 1)}: missing (the events go on at ${id}); the chain is judged from there`);
      }
      scanner.line(row.line, id, true);
      lastId = id;
    }
    const state = events.length > 0 ? foldInto(structuredClone(base.state), events) : base.state;
    const warnings = scanner.warnings.length > 0 ? [...base.warnings, ...scanner.warnings] : base.warnings;
    const position = scanner.complete;
    this.memory = { lastId, position, state, warnings };
    if (keep && (events.length >= SNAPSHOT_AFTER_EVENTS || (!trustMemory && events.length > 0))) await this.saveSnapshot(client, this.memory);
    const broken = position.broken;
    return { state, warnings, ...(broken ? { broken } : {}), version: versionOf(lastId, position.lastHash) };
  }

  /** The snapshot this machine kept, when it is of this database and this fold, and every event it covers is still there unchanged. */
  private async loadSnapshot(client: pg.ClientBase): Promise<Checkpoint | undefined> {
    if (!this.snapshot) return undefined;
    const value = (await loadSnapshotFile(this.snapshot)) as SnapshotFile | undefined;
    if (value?.format !== "factory-pg-ledger-snapshot" || value.fold !== FOLD_VERSION || value.database !== maskUrl(this.url) || !(value.lastId > 0) || !isSavedState(value)) return undefined;
    if ((await prefixSum(client, value.lastId)) !== value.prefixSum) return undefined;
    return { lastId: value.lastId, position: value.position, warnings: value.warnings, state: restoredState(value) };
  }

  private async saveSnapshot(client: pg.ClientBase, checkpoint: Checkpoint): Promise<void> {
    if (!this.snapshot || checkpoint.lastId === 0) return;
    const value: SnapshotFile = {
      format: "factory-pg-ledger-snapshot",
      fold: FOLD_VERSION,
      database: maskUrl(this.url),
      lastId: checkpoint.lastId,
      position: checkpoint.position,
      warnings: checkpoint.warnings,
      ...savedState(checkpoint.state),
      prefixSum: await prefixSum(client, checkpoint.lastId),
    };
    // A machine that cannot keep it (a read-only checkout) folds from the start next time: never a failed read.
    await mkdir(dirname(this.snapshot), { recursive: true })
      .then(() => saveSnapshotFile(this.snapshot as string, value))
      .catch(() => undefined);
  }

  /** The fold from the start, forgetting the checkpoint. */
  verifyWith(client: pg.ClientBase): Promise<LedgerView> {
    this.memory = undefined;
    return this.readWith(client, false, true);
  }

  /** Appends in the caller's transaction; `committed` collects what the guards do once it commits. */
  private async appendWith(client: pg.ClientBase, events: readonly LedgerEvent[], committed: (() => void)[], batch: string = randomUUID()): Promise<void> {
    if (events.length === 0) return;
    for (const guard of this.guards) {
      const after = await guard(client, events);
      if (after) committed.push(after);
    }
    const last = await client.query<{ id: string; hash: string }>("SELECT id, hash FROM factory_events ORDER BY id DESC LIMIT 1");
    let id = Number(last.rows[0]?.id ?? 0);
    let prev = last.rows[0]?.hash ?? "";
    const ids: number[] = [];
    const lines: string[] = [];
    const hashes: string[] = [];
    const prevs: string[] = [];
    const packets: (string | null)[] = [];
    for (const event of events) {
      const line = JSON.stringify({ ...event, prev });
      id += 1;
      ids.push(id);
      lines.push(line);
      prevs.push(prev);
      prev = chainHash(line);
      hashes.push(prev);
      packets.push(eventPacket(event) ?? null);
    }
    await client.query("INSERT INTO factory_events (id, line, hash, prev, packet, batch) SELECT *, $6 FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])", [
      ids,
      lines,
      hashes,
      prevs,
      packets,
      batch,
    ]);
    // A wake-up for idle workers: new events may have made a packet claimable (never relied on: they poll too).
    await client.query("SELECT pg_notify('factory_ledger', $1)", [String(id)]);
  }

  async append(bodies: readonly EventBody[]): Promise<LedgerEvent[]> {
    const events = bodies.map((body) => stamp(body));
    const batch = randomUUID();
    let tried = false;
    await this.patiently(async () => {
      // A try whose COMMIT may have gone through before the connection broke: its events are there, or none are.
      if (tried && (await this.withClient((client) => client.query("SELECT 1 FROM factory_events WHERE batch = $1 LIMIT 1", [batch]))).rows.length > 0) return;
      tried = true;
      await this.lockedOnce((client, _tx, committed) => this.appendWith(client, events, committed, batch));
    });
    return events;
  }

  private async lockedOnce<T>(action: (client: pg.ClientBase, tx: LedgerTransaction, committed: (() => void)[]) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    return this.withClient(async (client) => {
      await client.query("BEGIN");
      try {
        await client.query("SELECT pg_advisory_xact_lock($1)", [LOCK.ledger]);
        stopPoint("ledger-transaction");
        const before = this.memory;
        const committed: (() => void)[] = [];
        const tx: LedgerTransaction = { read: () => this.readWith(client), append: (events) => this.appendWith(client, events, committed) };
        let result: T;
        try {
          result = await action(client, tx, committed);
        } catch (error) {
          this.memory = before; // what was read inside a transaction rolled back was never there
          throw error;
        }
        await client.query("COMMIT");
        for (const after of committed) after();
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  /** A transaction cut off by a lost connection was rolled back (or, if its COMMIT got through, its effects are read back). */
  locked<T>(action: (client: pg.ClientBase, tx: LedgerTransaction, committed: (() => void)[]) => Promise<T>): Promise<T> {
    return this.patiently(() => this.lockedOnce(action));
  }

  historyOnce(): Promise<LedgerView<PacketHistory>> {
    return this.withClient(async (client): Promise<LedgerView<PacketHistory>> => {
      if (!(await this.readable(client))) return { state: emptyState() as LedgerState<PacketHistory>, warnings: [] };
      const events: LedgerEvent[] = [];
      const scanner = new LedgerScanner(SCAN_START, (event) => events.push(event), eventLine);
      const { rows } = await client.query<{ id: string; line: string }>("SELECT id, line FROM factory_events ORDER BY id");
      for (const row of rows) scanner.line(row.line, Number(row.id), true);
      const state = foldInto(emptyState(), events, true) as LedgerState<PacketHistory>;
      const broken = scanner.at.broken;
      return { state, warnings: scanner.warnings, ...(broken ? { broken } : {}) };
    });
  }

  versionOnce(): Promise<string> {
    return this.withClient(async (client) => {
      if (!(await this.readable(client))) return "0:";
      const { rows } = await client.query<{ id: string; hash: string }>("SELECT id, hash FROM factory_events ORDER BY id DESC LIMIT 1");
      return versionOf(Number(rows[0]?.id ?? 0), rows[0]?.hash ?? "");
    });
  }

  lines(): Promise<string[]> {
    return this.withClient(async (client) => {
      if (!(await this.readable(client))) return [];
      return (await client.query<{ line: string }>("SELECT line FROM factory_events ORDER BY id")).rows.map((row) => row.line);
    });
  }

  importLines(lines: readonly string[]): Promise<{ ok: true } | { ok: false; reason: string }> {
    return this.locked(async (client) => {
      const { rows } = await client.query<{ count: string }>("SELECT count(*) AS count FROM factory_events");
      if (Number(rows[0]?.count) > 0) return { ok: false as const, reason: `the ledger database ${maskUrl(this.url)} already holds ${rows[0]?.count} event(s); import only into an empty ledger` };
      const prevs = lines.map((line, at) => {
        const link = (JSON.parse(line) as { prev?: unknown }).prev;
        // Lines written before the chain existed carry no link: each gets a placeholder of its own.
        return typeof link === "string" ? link : `unchained:${at + 1}`;
      });
      await client.query("INSERT INTO factory_events (id, line, hash, prev, packet) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])", [
        lines.map((_, at) => at + 1),
        lines,
        lines.map((line) => chainHash(line)),
        prevs,
        lines.map((line) => packetOf(line)),
      ]);
      this.memory = undefined;
      return { ok: true as const };
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

function packetOf(line: string): string | null {
  const packet = (JSON.parse(line) as { packet?: unknown }).packet;
  return typeof packet === "string" ? packet : null;
}

/**
 * What events 1 to `lastId` hold, summed by the database (the lines never cross the network): each line's 64-bit
 * hash seeded with its number, so an edit or a swap changes it. Not a defence against a writer who can forge
 * (one who can edit rows can append too; `ledger verify` folds everything): it notices a row edited in place
 * under a snapshot, as the file's prefix hash does, in a fifth of the time of an md5 of every line.
 */
async function prefixSum(client: pg.ClientBase, lastId: number): Promise<string> {
  const { rows } = await client.query<{ sum: string | null }>("SELECT sum(hashtextextended(line, id))::text AS sum FROM factory_events WHERE id <= $1", [lastId]);
  return rows[0]?.sum ?? "";
}

function versionOf(lastId: number, lastHash: string): string {
  return `${lastId}:${lastHash}`;
}

/** The database could not be reached, or the connection broke: an environment error, never the work's; the message has no password. */
export class LedgerUnreachable extends Error {
  override readonly name = "LedgerUnreachable";
  constructor(
    private readonly url: string,
    private readonly cause_: unknown,
    /** How long it was waited for, when the wait gave up. */
    readonly waitedMs?: number,
  ) {
    const text = cause_ instanceof Error ? cause_.message : String(cause_);
    const waited =
      waitedMs === undefined || waitedMs < 1000 ? "" : ` (waited for it ${Math.round(waitedMs / 60_000) >= 1 ? `${Math.round(waitedMs / 60_000)} min` : `${Math.round(waitedMs / 1000)} s`})`;
    super(`the ledger database ${maskUrl(url)} cannot be reached: ${maskSecrets(text, url)}${waited}`);
  }

  /** The same failure, after a wait for it that gave up. */
  after(waitedMs: number): LedgerUnreachable {
    return waitedMs < 1000 ? this : new LedgerUnreachable(this.url, this.cause_, waitedMs);
  }
}

/** Whether a pg error means the connection (not the statement) failed: the server went away, or never answered. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code ?? "";
  if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"].includes(code)) return true;
  // 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 08xxx connection exceptions; 25P03 and
  // 57P05: the server ended a session left idle (in a transaction, or at all) too long: a process that was frozen.
  if (code.startsWith("08") || ["57P01", "57P02", "57P03", "57P05", "25P03"].includes(code)) return true;
  const message = error instanceof Error ? error.message : "";
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}
