import type pg from "pg";

/**
 * The PostgreSQL ledger's schema, as migrations the factory applies itself
 * (`factory ledger migrate`, and every command that writes, when the
 * database is older). Each entry is one version; a database records the
 * versions it has in `factory_schema`. Never edit an entry that shipped: add
 * the next one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the chained events, the claims with their leases and fences, the workers' heartbeats.
  `CREATE TABLE factory_events (
     id bigint PRIMARY KEY,
     line text NOT NULL,
     hash text NOT NULL UNIQUE,
     -- Each event names its predecessor's hash once: two writers can never fork the chain.
     prev text NOT NULL UNIQUE,
     packet text,
     -- The append that wrote it: a retry after a connection lost at COMMIT finds its events there and writes none twice.
     batch text,
     written_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX factory_events_packet ON factory_events (packet, id);
   CREATE INDEX factory_events_batch ON factory_events (batch);
   CREATE SEQUENCE factory_fence;
   CREATE TABLE factory_workers (
     name text PRIMARY KEY,
     run text NOT NULL,
     host text NOT NULL,
     pid integer NOT NULL,
     started_at timestamptz NOT NULL DEFAULT now(),
     heartbeat_at timestamptz NOT NULL DEFAULT now(),
     lease_until timestamptz NOT NULL,
     ended_at timestamptz
   );
   CREATE TABLE factory_claims (
     packet text PRIMARY KEY,
     attempt integer NOT NULL,
     fence bigint NOT NULL,
     worker text NOT NULL,
     run text NOT NULL,
     claimed_at timestamptz NOT NULL DEFAULT now(),
     lease_until timestamptz NOT NULL
   );`,
  // 2: the one project the database serves (bound by the first `ledger migrate` or worker): another project's workers are refused.
  `CREATE TABLE factory_project (
     only_one boolean PRIMARY KEY DEFAULT true CHECK (only_one),
     root text NOT NULL,
     branch text NOT NULL,
     remote text,
     bound_at timestamptz NOT NULL DEFAULT now(),
     bound_by text NOT NULL
   );`,
  // 3: the fleet's landing queue: candidates gated and ready to land, and the one lander (a lease) that lands them.
  `CREATE TABLE factory_landings (
     id bigserial PRIMARY KEY,
     packet text NOT NULL,
     attempt integer NOT NULL,
     fence bigint NOT NULL,
     worker text NOT NULL,
     -- What land() needs, as data (merge/fleet-landing.ts); its commits are on the remote under refs/factory/landing/.
     candidate jsonb NOT NULL,
     claimed_at timestamptz NOT NULL,
     ready_at timestamptz NOT NULL DEFAULT now(),
     -- The land() result, once the lander has landed it (or found why not): the candidate's worker records it.
     result jsonb,
     landed_by text,
     done_at timestamptz,
     UNIQUE (packet, attempt)
   );
   CREATE TABLE factory_lander (
     only_one boolean PRIMARY KEY DEFAULT true CHECK (only_one),
     worker text NOT NULL,
     run text NOT NULL,
     lease_until timestamptz NOT NULL
   );`,
];

export const SCHEMA_LATEST = MIGRATIONS.length;

/** Keys of the factory's advisory locks (transaction-scoped only: never a session lock, which can outlive its client). */
export const LOCK = { ledger: 0x66616374, migrate: 0x66616375 } as const;

export type SchemaState = { kind: "absent" } | { kind: "current"; version: number } | { kind: "older"; version: number } | { kind: "newer"; version: number };

/** The schema version a database has, against this factory's. */
export async function schemaState(client: pg.ClientBase): Promise<SchemaState> {
  const table = await client.query<{ found: string | null }>("SELECT to_regclass('factory_schema')::text AS found");
  if (!table.rows[0]?.found) return { kind: "absent" };
  const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM factory_schema");
  const version = rows[0]?.version ?? 0;
  if (version === SCHEMA_LATEST) return { kind: "current", version };
  return version < SCHEMA_LATEST ? { kind: "older", version } : { kind: "newer", version };
}

/**
 * Brings the database to the latest schema, in one transaction under an
 * advisory lock (two workers starting at once migrate once). Refuses a
 * database of a newer factory. Returns the versions before and after.
 */
export async function migrate(client: pg.ClientBase): Promise<{ from: number; to: number }> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [LOCK.migrate]);
    await client.query("CREATE TABLE IF NOT EXISTS factory_schema (version integer PRIMARY KEY, migrated_at timestamptz NOT NULL DEFAULT now())");
    const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM factory_schema");
    const from = rows[0]?.version ?? 0;
    if (from > SCHEMA_LATEST) throw new NewerSchemaError(from);
    for (let version = from + 1; version <= SCHEMA_LATEST; version++) {
      await client.query(MIGRATIONS[version - 1] as string);
      await client.query("INSERT INTO factory_schema (version) VALUES ($1)", [version]);
    }
    await client.query("COMMIT");
    return { from, to: Math.max(from, SCHEMA_LATEST) };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

export class NewerSchemaError extends Error {
  constructor(readonly version: number) {
    super(`the ledger database has schema version ${version}, newer than this factory's ${SCHEMA_LATEST}: it was migrated by a newer factory; upgrade factory on this machine`);
  }
}
