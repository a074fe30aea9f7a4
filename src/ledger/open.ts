import { join } from "node:path";
import type { Config } from "../config/types.js";
import { fileLedger } from "./file-ledger.js";
import type { Ledger } from "./ledger.js";
import { type PgLedger, pgLedger } from "./pg-ledger.js";
import { SCHEMA_LATEST } from "./pg-schema.js";
import { LEDGER_URL_VARIABLE } from "./pg-url.js";
import { STATE_DIR } from "./scan.js";

/** Where a checkout keeps its fold of a PostgreSQL ledger for the next process (beside the file ledger's snapshot). */
export const PG_SNAPSHOT_FILE = "ledger.pg-snapshot.json";

/** The URL of the PostgreSQL ledger this repository uses, or undefined for the file: `FACTORY_LEDGER_URL` wins over `[ledger] url`. */
export function ledgerUrl(config: Config | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env[LEDGER_URL_VARIABLE]?.trim();
  return fromEnv || config?.ledger.url;
}

const opened = new Map<string, PgLedger>();

/**
 * The ledger of a repository: the file under `.factory/state/` (one machine),
 * or PostgreSQL (several). One PostgreSQL ledger per URL in a process: its
 * pool and its incremental fold are shared by every command step.
 */
export function openLedger(root: string, config: Config | undefined, env: NodeJS.ProcessEnv = process.env): Ledger {
  const url = ledgerUrl(config, env);
  if (!url) return fileLedger(root);
  let ledger = opened.get(url);
  if (!ledger) {
    ledger = pgLedger(url, { snapshot: join(root, STATE_DIR, PG_SNAPSHOT_FILE), ...(config ? { idleTransactionMs: config.workers.leaseMs } : {}) });
    opened.set(url, ledger);
  }
  return ledger;
}

/** Whether a ledger is the shared PostgreSQL one (claims with leases, no run lock). */
export function isPgLedger(ledger: Ledger): ledger is PgLedger {
  return "locked" in ledger && "guards" in ledger;
}

/**
 * The ledger as doctor reports it: where it is (a database's URL with no
 * password), whether it can be reached, and its schema against this
 * factory's. A problem when a database cannot be reached or a newer factory
 * migrated it.
 */
export async function checkLedger(ledger: Ledger): Promise<{ what: string; problem?: string }> {
  if (!isPgLedger(ledger)) return { what: `the ledger: the file ${ledger.where} (one machine; [ledger] url shares one among several)` };
  try {
    const found = await ledger.query<{ found: string | null }>("SELECT to_regclass('factory_schema')::text AS found");
    const version = found.rows[0]?.found ? Number((await ledger.query<{ version: number | null }>("SELECT max(version) AS version FROM factory_schema")).rows[0]?.version ?? 0) : 0;
    const what = `the ledger: PostgreSQL at ${ledger.where}, schema version ${version} of ${SCHEMA_LATEST}`;
    if (version > SCHEMA_LATEST) return { what, problem: `the database was migrated by a newer factory (schema ${version}); upgrade factory on this machine` };
    return { what: version < SCHEMA_LATEST ? `${what} (\`factory ledger migrate\` or the next run brings it up to date)` : what };
  } catch (error) {
    return {
      what: `the ledger: PostgreSQL at ${ledger.where}`,
      problem: `${error instanceof Error ? error.message : String(error)}; check the URL, that the server runs and that this machine may connect`,
    };
  }
}
