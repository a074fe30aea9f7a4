import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ownerIsGone, withStateLockAt } from "../../src/ledger/state-lock.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A lock left behind by `owner`, its mtime an hour ahead so the mtime rule alone would never call it stale. */
function leftLock(owner: { pid: number; host: string }): string {
  const dir = mkdtempSync(join(tmpdir(), "factory-lock-"));
  dirs.push(dir);
  const lock = join(dir, "land.lock");
  mkdirSync(lock);
  writeFileSync(`${lock}.owner`, JSON.stringify(owner));
  const ahead = new Date(Date.now() + 3_600_000);
  utimesSync(lock, ahead, ahead);
  return lock;
}

function deadPid(): number {
  const pid = spawnSync("true").pid;
  if (!pid) throw new Error("could not start true");
  return pid;
}

describe("state locks", () => {
  it("a lock whose owner died on this host is taken over at once; the new holder is recorded, and both files go on release", async () => {
    const lock = leftLock({ pid: deadPid(), host: hostname() });
    let ownerWhileHeld = "";
    const result = await withStateLockAt(lock, lock, 0, async () => {
      ownerWhileHeld = readFileSync(`${lock}.owner`, "utf8");
      return "ran";
    });
    expect(result).toBe("ran");
    expect(JSON.parse(ownerWhileHeld)).toEqual({ pid: process.pid, host: hostname() });
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(`${lock}.owner`)).toBe(false);
  });

  it("a lock held by a live process, or by a process on another host, is not taken", async () => {
    const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const live = leftLock({ pid: sleeper.pid as number, host: hostname() });
      await expect(withStateLockAt(live, live, 0, async () => "ran")).rejects.toMatchObject({ code: "ELOCKED" });
      const elsewhere = leftLock({ pid: deadPid(), host: `not-${hostname()}` });
      await expect(withStateLockAt(elsewhere, elsewhere, 0, async () => "ran")).rejects.toMatchObject({ code: "ELOCKED" });
      const unknown = leftLock({ pid: deadPid(), host: hostname() });
      writeFileSync(`${unknown}.owner`, "{torn");
      await expect(withStateLockAt(unknown, unknown, 0, async () => "ran")).rejects.toMatchObject({ code: "ELOCKED" });
      expect(existsSync(`${live}.owner`)).toBe(true); // nothing of theirs was removed
    } finally {
      sleeper.kill();
    }
  });

  it("ownerIsGone: only a recorded owner of this host that is not alive, and never this process", () => {
    const dead = () => false;
    expect(ownerIsGone({ pid: 4242, host: "h" }, "h", dead)).toBe(true);
    expect(ownerIsGone({ pid: 4242, host: "h" }, "h", () => true)).toBe(false);
    expect(ownerIsGone({ pid: 4242, host: "other" }, "h", dead)).toBe(false);
    expect(ownerIsGone(undefined, "h", dead)).toBe(false);
    expect(ownerIsGone({ pid: process.pid, host: "h" }, "h", dead)).toBe(false);
  });
});
