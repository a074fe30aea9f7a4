import { randomUUID } from "node:crypto";
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
  | { ok: true; lock: RunLockInfo; release: () => Promise<void>; tookOverFrom?: RunLockInfo }
  | { ok: false; reason: "held"; holder: RunLockInfo }
  | { ok: false; reason: "held-elsewhere"; holder: RunLockInfo };

export function runLockPath(root: string): string {
  return join(root, STATE_DIR, RUN_LOCK_FILE);
}

/**
 * Takes the one-run-per-repository lock. A lock left by a process that no
 * longer exists on this host is taken over, and the takeover is recorded in
 * the ledger. A lock from another host cannot be checked, so it is refused.
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
      if (isAlive(holder.pid)) return { ok: false, reason: "held", holder };
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
    return tookOverFrom ? { ok: true, lock, release, tookOverFrom } : { ok: true, lock, release };
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
