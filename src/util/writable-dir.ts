import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Whether the factory can write in `dir` (made if missing): undefined, or
 * what stops it, naming the directory and the system's error. Tried by
 * writing and removing a probe file, so a read-only mount, a directory
 * without write permission and a full disk are all found, whoever runs it.
 */
export function unwritableDir(dir: string): string | undefined {
  const probe = join(dir, `.write-probe-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, "");
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EROFS" ? "it is on a read-only filesystem" : code === "EACCES" || code === "EPERM" ? "this user may not write there" : "it cannot be written";
    return `${dir} cannot be written: ${why} (${code ?? (error instanceof Error ? error.message : String(error))}); the run keeps its lock, ledger, baselines and logs there: make it writable, or run from a checkout where it is`;
  } finally {
    rmSync(probe, { force: true });
  }
}
