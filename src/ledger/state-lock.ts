import * as fs from "node:fs";
import { hostname } from "node:os";
import type lockfile from "proper-lockfile";

/**
 * The factory's locks under `.factory/state` (the ledger lock, the landing
 * lock). proper-lockfile takes a lock with an atomic mkdir and treats a lock
 * whose mtime was not refreshed for `stale` ms as abandoned; that alone makes
 * every command after a crash (a kill, an out-of-memory) wait the full stale
 * time. So each holder also writes its pid and host beside the lock
 * (`<lock>.owner`), and a lock whose owner is a process of this host that is
 * gone is stale at once. An owner on another host, an owner that cannot be
 * read, or a pid that is alive (or reused) leaves the mtime rule to decide.
 *
 *   acquire: mkdir <lock> → write <lock>.owner
 *   release: remove <lock>.owner → rmdir <lock>
 *
 * so an owner file exists only while its writer holds, or died holding, the lock.
 */

export interface LockOwner {
  pid: number;
  host: string;
}

/** Pure: whether the recorded owner of a lock is certainly gone. */
export function ownerIsGone(owner: LockOwner | undefined, thisHost: string, alive: (pid: number) => boolean): boolean {
  return owner !== undefined && owner.host === thisHost && owner.pid !== process.pid && !alive(owner.pid);
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"; // EPERM: alive, another user's
  }
}

function ownerFile(lockPath: string): string {
  return `${lockPath}.owner`;
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(fs.readFileSync(ownerFile(lockPath), "utf8")) as Partial<LockOwner>;
    return typeof owner.pid === "number" && typeof owner.host === "string" ? { pid: owner.pid, host: owner.host } : undefined;
  } catch {
    return undefined;
  }
}

const LONG_AGO = new Date(0);

/**
 * The file system proper-lockfile sees: `stat` of a lock whose owner is gone
 * reports an mtime long ago, so proper-lockfile removes it as stale at once;
 * removing a lock removes its owner file first.
 */
export function ownerAwareFs(alive: (pid: number) => boolean = processAlive): typeof fs {
  const host = hostname();
  const stat = ((path: fs.PathLike, ...rest: unknown[]) => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException | null, stats?: fs.Stats) => void;
    fs.stat(path, (error, stats) => {
      if (error || !stats) return callback(error);
      if (ownerIsGone(readOwner(String(path)), host, alive)) return callback(null, Object.assign(Object.create(Object.getPrototypeOf(stats)), stats, { mtime: LONG_AGO }));
      callback(null, stats);
    });
  }) as typeof fs.stat;
  const rmdir = ((path: fs.PathLike, ...rest: unknown[]) => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException | null) => void;
    fs.rm(ownerFile(String(path)), { force: true }, () => fs.rmdir(path, callback));
  }) as typeof fs.rmdir;
  const rmdirSync = ((path: fs.PathLike) => {
    fs.rmSync(ownerFile(String(path)), { force: true });
    fs.rmdirSync(path);
  }) as typeof fs.rmdirSync;
  return { ...fs, stat, rmdir, rmdirSync };
}

const lockFs = ownerAwareFs();

/** Runs `action` holding the lock at `lockPath` (a directory proper-lockfile makes); `key` names it in this process. */
export async function withStateLockAt<T>(key: string, lockPath: string, retries: lockfile.LockOptions["retries"], action: () => Promise<T>): Promise<T> {
  // Imported when a lock is first taken: with graceful-fs it costs ~30 ms to load, which commands that only read never pay.
  const properLockfile = (await import("proper-lockfile")) as unknown as typeof lockfile;
  const release = await properLockfile.lock(key, { lockfilePath: lockPath, realpath: false, stale: 10_000, retries, fs: lockFs });
  try {
    fs.writeFileSync(ownerFile(lockPath), JSON.stringify({ pid: process.pid, host: hostname() } satisfies LockOwner));
  } catch (error) {
    await release();
    throw error;
  }
  try {
    return await action();
  } finally {
    await release();
  }
}
