import type { Config } from "../config/types.js";
import { fileLedger } from "./file-ledger.js";
import type { Ledger } from "./ledger.js";
import { pgLedger, type PgLedger } from "./pg-ledger.js";
import { LEDGER_URL_VARIABLE } from "./pg-url.js";

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
    ledger = pgLedger(url);
    opened.set(url, ledger);
  }
  return ledger;
}

/** Whether a ledger is the shared PostgreSQL one (claims with leases, no run lock). */
export function isPgLedger(ledger: Ledger): ledger is PgLedger {
  return "locked" in ledger && "guards" in ledger;
}
