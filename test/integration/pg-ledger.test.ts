import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EventBody } from "../../src/ledger/events.js";
import { fileLedger } from "../../src/ledger/file-ledger.js";
import { startWorkerClaims } from "../../src/ledger/pg-claims.js";
import { type PgLedger, pgLedger } from "../../src/ledger/pg-ledger.js";
import { SCHEMA_LATEST } from "../../src/ledger/pg-schema.js";
import { SNAPSHOT_AFTER_EVENTS } from "../../src/ledger/snapshot.js";
import { describeBreak } from "../../src/ledger/store.js";
import { claimPacket } from "../../src/loop/claim.js";
import type { Packet } from "../../src/packet/types.js";
import { packetLife } from "../helpers/ledger-events.js";
import { usePostgres } from "../helpers/postgres.js";

const pgFixture = usePostgres("the PostgreSQL ledger tests");
const opened: PgLedger[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function open(url?: string, snapshot?: string): Promise<PgLedger> {
  const ledger = pgLedger(url ?? (await pgFixture.database()), snapshot ? { snapshot } : {});
  opened.push(ledger);
  return ledger;
}

const owner = { run: "r1", pid: 1, host: "h" };
const project = { roots: ["0".repeat(40)], branch: "main", remote: undefined };
const life = (packet: string): EventBody[] => packetLife(packet, owner);

async function rows(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgreSQL ledger", () => {
  it("folds to the same state as the file ledger given the same events, incrementally", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const root = mkdtempSync(join(tmpdir(), "factory-pg-file-"));
    dirs.push(root);
    const file = fileLedger(root);
    const ledger = await open();
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-12-01T02:00:00Z") }); // both stamp their events alike
    context.onTestFinished(() => {
      vi.useRealTimers();
    });
    expect((await ledger.read()).state.packets.size).toBe(0); // a database never written is an empty ledger
    for (const batch of [
      [{ kind: "run-started", options: {}, ...owner } as EventBody, ...life("A")],
      [...life("B"), { kind: "blocked", packet: "A", reason: "by hand" } as EventBody],
    ]) {
      await file.append(batch);
      await ledger.append(batch);
      expect((await ledger.read()).state).toEqual((await file.read()).state);
    }
    // Another process's appends are folded by this reader too (it reads from the last event it folded).
    const other = await open(ledger.url);
    await other.append([{ kind: "run-ended", run: "r1", outcome: "drained" }]);
    await file.append([{ kind: "run-ended", run: "r1", outcome: "drained" }]);
    const view = await ledger.read();
    expect(view.state).toEqual((await file.read()).state);
    expect(view.state.packets.get("A")?.status).toEqual({ state: "blocked", reason: "by hand" });
    expect(view.broken).toBeUndefined();
    expect((await ledger.history()).state.packets.get("B")?.events.map((event) => event.kind)).toEqual(life("B").map((event) => event.kind));
  });

  it("keeps one unbroken chain under many writers at once, with no event lost or doubled", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const url = await pgFixture.database();
    const writers = await Promise.all(Array.from({ length: 6 }, () => open(url)));
    await Promise.all(
      writers.map(async (writer, at) => {
        for (let round = 0; round < 15; round++) {
          await writer.append([{ kind: "spent", for: `writer ${at} round ${round}`, agent: "a", model: "m", costUsd: 0.01 }]);
        }
      }),
    );
    const reader = await open(url);
    const view = await reader.verify();
    expect(view.broken).toBeUndefined();
    expect(view.warnings).toEqual([]);
    expect(view.state.costUsd).toBeCloseTo(6 * 15 * 0.01);
    const ids = (await rows(url, "SELECT id FROM factory_events ORDER BY id")).map((row) => Number(row.id));
    expect(ids).toEqual(Array.from({ length: 90 }, (_, at) => at + 1)); // dense: event N is line N of the chain
  });

  it("refuses a second event naming the same predecessor: a writer that skipped the lock cannot fork the chain", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const ledger = await open();
    await ledger.append(life("A"));
    const [last] = await rows(ledger.url, "SELECT id, line, hash, prev FROM factory_events ORDER BY id DESC LIMIT 1");
    await expect(rows(ledger.url, "INSERT INTO factory_events (id, line, hash, prev) VALUES (100, 'x', 'y', $1)", [last?.prev])).rejects.toThrow(/duplicate key/);
  });

  it("shows a row edited in place as a broken chain, named by its event number", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const ledger = await open();
    await ledger.append([...life("A"), ...life("B")]);
    expect((await ledger.read()).broken).toBeUndefined();
    await rows(ledger.url, "UPDATE factory_events SET line = replace(line, '\"costUsd\":0.25', '\"costUsd\":0.01') WHERE id = 3");
    const view = await ledger.verify();
    expect(view.broken?.line).toBe(4); // the line after the edit no longer names its hash
    expect(describeBreak(view)).toMatch(/^ledger event 4: the ledger's hash chain breaks here/);
    // A reader that had folded past the edit notices too: the event it ended on no longer hashes the same.
    await ledger.append([{ kind: "run-ended", run: "r1", outcome: "drained" }]);
    const fresh = await open(ledger.url);
    await fresh.read();
    await rows(ledger.url, "UPDATE factory_events SET line = replace(line, 'drained', 'halted') WHERE id = 13");
    expect((await fresh.read()).broken).toBeDefined();
  });

  it("folds again from the start when the database was rewound (restored from an older backup)", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const ledger = await open();
    await ledger.append(life("A"));
    await ledger.append(life("B"));
    expect((await ledger.read()).state.packets.get("B")?.status.state).toBe("merged");
    await rows(ledger.url, "DELETE FROM factory_events WHERE id > 6");
    const view = await ledger.read();
    expect(view.state.packets.has("B")).toBe(false);
    expect(view.state.packets.get("A")?.status.state).toBe("merged");
    expect(view.version).toMatch(/^6:/);
  });

  it("leaves its fold on this machine after a long read, and a new process starts from it (status on a long ledger)", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const dir = mkdtempSync(join(tmpdir(), "factory-pg-snapshot-"));
    dirs.push(dir);
    const snapshot = join(dir, "state", "ledger.pg-snapshot.json");
    const packets = Math.ceil(SNAPSHOT_AFTER_EVENTS / life("A").length) + 1;
    const writer = await open();
    await writer.append(Array.from({ length: packets }, (_, at) => life(`P${at}`)).flat());
    expect(existsSync(snapshot)).toBe(false);
    // A read inside a transaction (which may hold its own events, not yet committed) leaves none; a plain read does.
    await (await open(writer.url, snapshot)).transaction((tx) => tx.read());
    expect(existsSync(snapshot)).toBe(false);
    const full = (await (await open(writer.url, snapshot)).read()).state;
    expect(existsSync(snapshot)).toBe(true);
    // Proof that a new process reads it: a value planted in it comes back, with the events after it folded on.
    const saved = JSON.parse(readFileSync(snapshot, "utf8"));
    writeFileSync(snapshot, JSON.stringify({ ...saved, costUsd: 1234 }));
    await writer.append(life("Z"));
    const view = await (await open(writer.url, snapshot)).read();
    expect(view.state.costUsd).toBeCloseTo(1234 + 0.25);
    expect(view.state.packets.get("Z")?.status.state).toBe("merged");
    expect(view.state.packets.size).toBe(full.packets.size + 1);
    // Another database's snapshot is never read, even one whose events are the same.
    const twin = await open();
    await twin.importLines(await writer.lines());
    expect((await (await open(twin.url, snapshot)).read()).state.costUsd).toBeCloseTo((packets + 1) * 0.25);
  });

  it("does not trust its snapshot once an event it covers was edited in place: a new reader folds from the start and finds the break", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const dir = mkdtempSync(join(tmpdir(), "factory-pg-snapshot-"));
    dirs.push(dir);
    const snapshot = join(dir, "ledger.pg-snapshot.json");
    const ledger = await open(undefined, snapshot);
    await ledger.append(Array.from({ length: Math.ceil(SNAPSHOT_AFTER_EVENTS / life("A").length) + 1 }, (_, at) => life(`P${at}`)).flat());
    expect((await ledger.read()).broken).toBeUndefined();
    expect(existsSync(snapshot)).toBe(true);
    // The snapshot's last event is untouched (so a check of that one alone would pass); one before it is edited.
    await rows(ledger.url, "UPDATE factory_events SET line = replace(line, '\"costUsd\":0.25', '\"costUsd\":0.01') WHERE id = 3");
    const view = await (await open(ledger.url, snapshot)).read();
    expect(view.broken?.line).toBe(4);
  });

  it("names its version: the same for a read and for the database as it is, new after an append", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const ledger = await open();
    await ledger.append(life("A"));
    const view = await ledger.read();
    expect(await ledger.version()).toBe(view.version);
    await ledger.append([{ kind: "blocked", packet: "A", reason: "x" }]);
    expect(await ledger.version()).not.toBe(view.version);
  });

  it("claims in a database transaction: two claims of one packet at once, one wins", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const root = mkdtempSync(join(tmpdir(), "factory-pg-claim-"));
    dirs.push(root);
    const url = await pgFixture.database();
    const packet = { id: "A", sha256: "sha-A", file: "packets/A.toml" } as Packet;
    const results = await Promise.all(Array.from({ length: 4 }, async (_, at) => claimPacket(root, await open(url), packet, { run: `r${at}`, pid: at, host: "h" })));
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.filter((result) => !result.ok).map((result) => (result.ok ? "" : result.reason))).toEqual(["A is running", "A is running", "A is running"]);
    const view = await (await open(url)).read();
    expect(view.state.packets.get("A")?.attemptsUsed).toBe(1);
  });

  it("records a claim this very worker lost as interrupted when it recovers expired claims, and a later attempt's events (takeover writes, not the lost holder's)", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const root = mkdtempSync(join(tmpdir(), "factory-pg-recover-"));
    dirs.push(root);
    const url = await pgFixture.database();
    const ledger = await open(url);
    const claims = await startWorkerClaims(ledger, { worker: "w1", owner, leaseMs: 60_000, project });
    try {
      const packet = { id: "A", sha256: "sha-A", file: "packets/A.toml" } as Packet;
      expect((await claimPacket(root, ledger, packet, owner, claims)).ok).toBe(true);
      // The claim ran out (the database was away longer than the lease), and this worker finds it so.
      await rows(url, "UPDATE factory_claims SET lease_until = now() - interval '1 second'");
      await expect(claims.assertHeld("A")).rejects.toThrow(/its lease ran out/);
      expect(claims.lost("A")).toBe(true);
      expect(await claims.recover()).toEqual(["A"]);
      const record = (await ledger.read()).state.packets.get("A");
      expect(record).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0 });
      // Its own writes for the lost attempt stay refused.
      await expect(ledger.append([{ kind: "decided", packet: "A", attempt: 1, decision: "retry", reasons: ["late"] }])).rejects.toThrow(/claim is lost/);
      // A later attempt's record (another worker's, seen here: a PR it opened, watched by this worker) is not the lost holder's write.
      await expect(ledger.append([{ kind: "decided", packet: "A", attempt: 2, decision: "retry", reasons: ["the forge sent it back"] }])).resolves.toHaveLength(1);
    } finally {
      await claims.stop();
    }
  });

  it("refuses, at the append itself, a holder's event once its packet was taken over with another fence: nothing of it is written", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const root = mkdtempSync(join(tmpdir(), "factory-pg-fence-"));
    dirs.push(root);
    const url = await pgFixture.database();
    const ledger = await open(url);
    // A lease long enough that no renewal runs during the test: only the append's own check can see the takeover.
    const claims = await startWorkerClaims(ledger, { worker: "w1", owner, leaseMs: 600_000, project });
    try {
      const packet = { id: "A", sha256: "sha-A", file: "packets/A.toml" } as Packet;
      expect((await claimPacket(root, ledger, packet, owner, claims)).ok).toBe(true);
      // The holder's own write goes through while its fence is current (the quiet side).
      const seen = (what: string): EventBody => ({ kind: "outside-change-seen", packet: "A", attempt: 1, changes: [what] });
      await expect(ledger.append([seen("first")])).resolves.toHaveLength(1);
      // Another worker took the packet over (its claim ran out there, say): a new fence on the row.
      await rows(url, "UPDATE factory_claims SET fence = nextval('factory_fence'), worker = 'w2' WHERE packet = 'A'");
      const before = Number((await rows(url, "SELECT count(*) AS n FROM factory_events"))[0]?.n);
      await expect(ledger.append([seen("late")])).rejects.toThrow(/taken over with fence \d+; this worker's was \d+/);
      expect(Number((await rows(url, "SELECT count(*) AS n FROM factory_events"))[0]?.n)).toBe(before);
      expect(claims.lost("A")).toBe(true);
    } finally {
      await claims.stop();
    }
  });

  it("LISTEN wakes a waiting worker; a listener whose connection the server ends wakes its waiter, listens again, and the next NOTIFY wakes it", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const url = await pgFixture.database();
    const claims = await startWorkerClaims(await open(url), { worker: "listener", owner, leaseMs: 60_000, project });
    const never = new AbortController().signal;
    const LONG = 10 * 60_000; // far past the test's own timeout: only a wake-up ends these waits
    const listening = async (): Promise<void> => {
      while ((await rows(url, "SELECT pid FROM pg_stat_activity WHERE application_name = 'factory-listen' AND query ILIKE 'LISTEN%'")).length === 0)
        await new Promise((resolve) => setTimeout(resolve, 50));
    };
    try {
      const first = claims.waitForWork(LONG, never);
      await listening();
      await rows(url, "NOTIFY factory_ledger");
      await first;

      const second = claims.waitForWork(LONG, never);
      await listening();
      await rows(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'factory-listen'");
      await second; // a broken listener may have missed a notification: its waiter asks again

      const third = claims.waitForWork(LONG, never);
      await listening(); // connected and listening again
      await rows(url, "NOTIFY factory_ledger");
      await third;
    } finally {
      await claims.stop();
    }
  }, 60_000);

  it("migrates once and records the version; refuses a database a newer factory migrated", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const url = await pgFixture.database();
    const [first, second] = await Promise.all([(await open(url)).migrate(), (await open(url)).migrate()]);
    expect([first?.from, second?.from].sort()).toEqual([0, SCHEMA_LATEST]);
    expect(await rows(url, "SELECT version FROM factory_schema ORDER BY version")).toEqual(Array.from({ length: SCHEMA_LATEST }, (_, at) => ({ version: at + 1 })));
    await rows(url, "INSERT INTO factory_schema (version) VALUES ($1)", [SCHEMA_LATEST + 1]);
    await expect((await open(url)).read()).rejects.toThrow(`the ledger database has schema version ${SCHEMA_LATEST + 1}, newer than this factory's ${SCHEMA_LATEST}`);
  });

  it("bounds an outage as a whole, not each call: once the patience ran out, the next call gives up at once, saying how long it waited", async () => {
    const ledger = pgLedger("postgres://factory:hunter2@127.0.0.1:1/factory");
    opened.push(ledger);
    const waits: string[] = [];
    ledger.waitWhenUnreachable(3_000, (message) => waits.push(message));
    await expect(ledger.read()).rejects.toThrow(/cannot be reached: connect ECONNREFUSED 127\.0\.0\.1:1 \(waited for it \d+ s\)/);
    const waited = waits.length;
    expect(waited).toBeGreaterThan(0);
    // The database is still away: a second call does not start a wait of its own.
    await expect(ledger.read()).rejects.toThrow(/cannot be reached/);
    expect(waits).toHaveLength(waited);
  });

  it("says the database cannot be reached without printing its password, and goes on by itself after a restart", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const cluster = pgFixture.cluster();
    const ledger = await open();
    await ledger.append(life("A"));
    await cluster.stopServer();
    try {
      const failure = await ledger.read().then(
        () => undefined,
        (error: Error) => error,
      );
      expect(failure?.message).toMatch(/^the ledger database postgres:\/\/factory:\*\*\*@127\.0\.0\.1:\d+\/\w+ cannot be reached/);
      expect(failure?.message).not.toContain(cluster.password);
    } finally {
      await cluster.startServer();
    }
    await ledger.append(life("B"));
    const view = await ledger.read();
    expect([...view.state.packets.keys()]).toEqual(["A", "B"]);
    expect(view.broken).toBeUndefined();
  });

  it("survives the server going away while a connection is checked out between two queries: the transaction fails as unreachable, the process goes on", async (context) => {
    if (!pgFixture.available()) return context.skip();
    const cluster = pgFixture.cluster();
    const ledger = await open();
    await ledger.append(life("A"));
    const failure = await ledger
      .locked(async (client) => {
        // The server terminates every connection (FATAL 57P01) while this one waits between queries.
        // pg_ctl returns once the server is down: its goodbye reached this client's socket meanwhile.
        await cluster.stopServer();
        await client.query("SELECT 1");
      })
      .then(
        () => undefined,
        (error: Error) => error,
      );
    await cluster.startServer();
    expect(failure?.message).toMatch(/cannot be reached/);
    await ledger.append(life("B"));
    expect([...(await ledger.read()).state.packets.keys()]).toEqual(["A", "B"]);
  });
});
