import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { maskUrl } from "../ledger/pg-url.js";
import type { Output } from "../log/output.js";
import { startCluster, stopClusterAt } from "../process/postgres-cluster.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

/**
 * Where `factory dev-postgres` keeps its cluster: the temporary directory, one per user (the server may
 * run as another user, the `postgres` one when this is root, and must reach it; a HOME is often closed to others).
 */
export function devClusterDir(): string {
  return join(tmpdir(), `factory-dev-postgres-${process.getuid?.() ?? "user"}`);
}

const URL_FILE = "url";

/**
 * `factory dev-postgres start`: a local PostgreSQL to try several workers
 * with (Debian's `postgresql` package, a cluster of its own on 127.0.0.1 —
 * the same helper the tests use). Its URL, password included, goes to a file
 * only the user can read; what is printed masks it.
 */
export async function devPostgresStart(options: { output: Output; dir?: string; port?: number }): Promise<ExitCode> {
  const { output } = options;
  const dir = options.dir ?? devClusterDir();
  const urlFile = join(dir, URL_FILE);
  if (existsSync(urlFile)) {
    output.out(`A development PostgreSQL is already there (${maskUrl((await readFile(urlFile, "utf8")).trim())}); \`factory dev-postgres stop\` removes it.`);
    output.out(`  export FACTORY_LEDGER_URL="$(cat ${urlFile})"`);
    return EXIT.ok;
  }
  const started = await startCluster({ dir, ...(options.port ? { port: options.port } : {}) });
  if (!started.ok) {
    output.err(`factory dev-postgres: ${started.reason}. Install it (Debian/Ubuntu: apt-get install postgresql), or point FACTORY_LEDGER_URL at a PostgreSQL you have.`);
    return EXIT.halted;
  }
  const url = await started.cluster.createDatabase("factory");
  await writeFile(urlFile, `${url}\n`, { mode: 0o600 });
  output.out(`started a development PostgreSQL on 127.0.0.1:${started.cluster.port} (${maskUrl(url)}), data in ${dir}`);
  output.out("Use it for this shell's factory commands:");
  output.out(`  export FACTORY_LEDGER_URL="$(cat ${urlFile})"`);
  output.out("  factory ledger migrate && factory run --worker one");
  output.out("`factory dev-postgres stop` stops it and removes its data.");
  return EXIT.ok;
}

/** `factory dev-postgres stop`: stops the development cluster and removes its directory. */
export async function devPostgresStop(options: { output: Output; dir?: string }): Promise<ExitCode> {
  const dir = options.dir ?? devClusterDir();
  if (!existsSync(dir)) {
    options.output.out(`No development PostgreSQL in ${dir}; nothing to stop.`);
    return EXIT.ok;
  }
  const stopped = await stopClusterAt(dir);
  if (!stopped.ok) {
    options.output.err(`factory dev-postgres stop: ${stopped.reason}`);
    return EXIT.halted;
  }
  options.output.out(`stopped the development PostgreSQL and removed ${dir}`);
  return EXIT.ok;
}
