import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { stamp } from "./events.js";
import { appendUnlocked, STATE_DIR, withLedgerLock } from "./store.js";

export const RUN_LOCK_FILE = "run.lock";

export interface RunLockInfo {
  run: string;
  pid: number;
  host: string;
  startedAt: string;
}

export type RunLockResult =
  | { ok: true; lock: RunLockInfo; release: () => Promise<void>; tookOverFrom?: RunLockInfo; pidReused?: true }
  | { ok: false; reason: "held"; holder: RunLockInfo }
  | { ok: false; reason: "held-elsewhere"; holder: RunLockInfo };

export function runLockPath(root: string): string {
  return join(root, STATE_DIR, RUN_LOCK_FILE);
}

/**
 * Takes the one-run-per-repository lock. A lock left by a process that no
 * longer exists on this host is taken over, and the takeover is recorded in
 * the ledger; so is one whose pid now belongs to a process that started after
 * the lock was taken (the pid was reused after the holder died). A lock from another host cannot be checked, so it is refused.
 * Everything happens under the ledger lock, so two runs cannot both take over.
 */
export async function acquireRunLock(root: string, now = new Date()): Promise<RunLockResult> {
  const lock: RunLockInfo = { run: randomUUID(), pid: process.pid, host: hostname(), startedAt: now.toISOString() };
  const path = runLockPath(root);
  return withLedgerLock(root, async () => {
    const holder = await readRunLock(root);
    let tookOverFrom: RunLockInfo | undefined;
    if (holder) {
      if (holder.host !== lock.host) return { ok: false, reason: "held-elsewhere", holder };
      if (isAlive(holder.pid) && !startedAfter(holder.pid, holder.startedAt)) return { ok: false, reason: "held", holder };
      tookOverFrom = holder;
      await appendUnlocked(root, [
        stamp(
          {
            kind: "run-lock-taken-over",
            run: lock.run,
            previous: { pid: holder.pid, host: holder.host, startedAt: holder.startedAt },
          },
          now,
        ),
      ]);
    }
    await writeFile(path, `${JSON.stringify(lock)}\n`, "utf8");
    const release = async (): Promise<void> => {
      await withLedgerLock(root, async () => {
        const current = await readRunLock(root);
        if (current?.run === lock.run) await rm(path, { force: true });
      });
    };
    if (!tookOverFrom) return { ok: true, lock, release };
    return isAlive(tookOverFrom.pid) ? { ok: true, lock, release, tookOverFrom, pidReused: true } : { ok: true, lock, release, tookOverFrom };
  });
}

export async function readRunLock(root: string): Promise<RunLockInfo | undefined> {
  let text: string;
  try {
    text = await readFile(runLockPath(root), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<RunLockInfo>;
    if (typeof value.pid === "number" && typeof value.host === "string") {
      return { run: String(value.run ?? "?"), pid: value.pid, host: value.host, startedAt: String(value.startedAt ?? "?") };
    }
  } catch {
    // fall through: an unreadable lock file is treated as abandoned by a dead process
  }
  return { run: "?", pid: 0, host: hostname(), startedAt: "?" };
}

/** Whether a process with this pid exists on this host (EPERM: it exists but is not ours). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process with this pid started after `iso` (more than the
 * clock's two seconds of slack): then it is not the one that wrote a lock at
 * that time, whose pid it reuses. Read from /proc (Linux); false where it
 * cannot be told.
 */
export function startedAfter(pid: number, iso: string): boolean {
  const taken = Date.parse(iso);
  if (Number.isNaN(taken)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses): the 22nd field is the start, in clock ticks since boot.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
    if (!Number.isFinite(ticks) || !Number.isFinite(boot)) return false;
    const started = boot * 1000 + (ticks / CLOCK_TICKS) * 1000;
    return started > taken + 2000;
  } catch {
    return false;
  }
}

/** Linux's USER_HZ, the unit of /proc's process times: 100 on every architecture it runs on today. */
const CLOCK_TICKS = 100;
