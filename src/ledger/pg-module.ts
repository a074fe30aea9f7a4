import { createRequire } from "node:module";
import type pg from "pg";

/**
 * The `pg` client, loaded when a PostgreSQL ledger is first used: a command on the file ledger (most of
 * them, and `status` above all) never pays for loading it (about 40 ms of every start).
 */
export function pgModule(): typeof pg {
  return createRequire(import.meta.url)("pg") as typeof pg;
}
