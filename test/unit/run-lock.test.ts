import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireRunLock, isAlive, runLockPath } from "../../src/ledger/run-lock.js";
import { readLedger, STATE_DIR } from "../../src/ledger/store.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "factory-lock-"));
  mkdirSync(join(root, STATE_DIR), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has exited: it existed, so it is a real pid, and it is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("run lock", () => {
  it("is taken once; a second run is refused while the holder lives; release frees it", async () => {
    const first = await acquireRunLock(root);
    expect(first.ok).toBe(true);
    const second = await acquireRunLock(root);
    expect(second).toMatchObject({ ok: false, reason: "held", holder: { pid: process.pid, host: hostname() } });
    if (first.ok) await first.release();
    expect(existsSync(runLockPath(root))).toBe(false);
    const third = await acquireRunLock(root);
    expect(third.ok).toBe(true);
    if (third.ok) await third.release();
  });

  it("takes over a lock whose process is dead, and records the takeover", async () => {
    const pid = deadPid();
    expect(isAlive(pid)).toBe(false);
    writeFileSync(runLockPath(root), JSON.stringify({ run: "old", pid, host: hostname(), startedAt: "2026-01-01T00:00:00Z" }));
    const result = await acquireRunLock(root);
    expect(result).toMatchObject({ ok: true, tookOverFrom: { pid, run: "old" } });
    const { events } = await readLedger(root);
    expect(events).toEqual([expect.objectContaining({ kind: "run-lock-taken-over", previous: { pid, host: hostname(), startedAt: "2026-01-01T00:00:00Z" } })]);
    if (result.ok) await result.release();
  });

  it("takes over a lock whose pid now belongs to a process started after it was taken (pid reuse); refuses while the holder itself lives", async () => {
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const pid = other.pid as number;
      const taken = new Date(Date.now() - 3_600_000).toISOString(); // an hour before that process started
      writeFileSync(runLockPath(root), JSON.stringify({ run: "old", pid, host: hostname(), startedAt: taken }));
      const result = await acquireRunLock(root);
      expect(result).toMatchObject({ ok: true, pidReused: true, tookOverFrom: { pid, run: "old" } });
      if (result.ok) await result.release();
      // The same live process, with a lock taken after it started: its own lock, held.
      writeFileSync(runLockPath(root), JSON.stringify({ run: "its", pid, host: hostname(), startedAt: new Date().toISOString() }));
      expect(await acquireRunLock(root)).toMatchObject({ ok: false, reason: "held", holder: { pid, run: "its" } });
    } finally {
      other.kill();
    }
  });

  it("refuses a lock held on another host, which it cannot check", async () => {
    writeFileSync(runLockPath(root), JSON.stringify({ run: "x", pid: 1, host: "elsewhere", startedAt: "t" }));
    expect(await acquireRunLock(root)).toMatchObject({ ok: false, reason: "held-elsewhere", holder: { host: "elsewhere" } });
  });

  it("does not release a lock that another run has taken over since", async () => {
    const first = await acquireRunLock(root);
    if (!first.ok) throw new Error("lock not taken");
    writeFileSync(runLockPath(root), JSON.stringify({ run: "other", pid: process.pid, host: hostname(), startedAt: "t" }));
    await first.release();
    expect(existsSync(runLockPath(root))).toBe(true);
  });
});
