import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWorktree } from "../../src/git/worktree.js";
import { worktreesDir } from "../../src/loop/context.js";
import { leftoverPid, sweepLeftovers } from "../../src/loop/leftovers.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

/** Issue 25.5: what a killed factory leaves is removed at the next start; a live process's never is. */
const made: TestRepo[] = [];
const temporaries: string[] = [];
afterEach(() => {
  for (const repo of made.splice(0)) repo.cleanup();
  for (const dir of temporaries.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

describe("leftovers of a killed factory", () => {
  it("knows the factory's names and the pid in them, and nothing else", () => {
    expect(leftoverPid("factory-sandbox-123-AbC")).toBe(123);
    expect(leftoverPid("_baseline-0123abcd0123-456-2")).toBe(456);
    expect(leftoverPid("_rerun-0123abcd0123-458-3")).toBe(458); // a flaky test's rerun at the tip
    expect(leftoverPid("_batch-0123abcd0123-457-1")).toBe(457); // a merge batch's scratch checkout
    expect(leftoverPid("_doctor-789")).toBe(789);
    expect(leftoverPid("_canary-42")).toBe(42);
    expect(leftoverPid("_mutants-43")).toBe(43);
    expect(leftoverPid(".baseline-0123abcd0123-456-2")).toBe(456); // an older version's names began with a dot
    expect(leftoverPid(".cut-44")).toBe(44);
    for (const name of ["factory-sandbox-AbC123", "P01", "_doctor", ".doctor", "P01.orphan-2026", "notes", "baseline-0123abcd0123-456-2"]) expect(leftoverPid(name)).toBeUndefined();
  });

  it("are removed when their process is gone: a sandbox directory and a registered scratch worktree; a live process's stay", async () => {
    const repo = makeRepo();
    made.push(repo);
    const temporary = mkdtempSync(join(tmpdir(), "factory-leftovers-"));
    temporaries.push(temporary);
    const dead = deadPid();
    mkdirSync(join(temporary, `factory-sandbox-${dead}-x1`));
    mkdirSync(join(temporary, `factory-sandbox-${process.pid}-x2`));
    const scratch = join(worktreesDir(repo.dir), `_doctor-${dead}`);
    await createWorktree(repo.dir, { path: scratch, start: "HEAD" });
    const removed = await sweepLeftovers(repo.dir, temporary);
    expect(removed.sort()).toEqual([join(temporary, `factory-sandbox-${dead}-x1`), scratch].sort());
    expect(existsSync(join(temporary, `factory-sandbox-${process.pid}-x2`))).toBe(true);
    expect(existsSync(scratch)).toBe(false);
    expect(repo.git("worktree", "list")).not.toContain(`_doctor-${dead}`);
  });
});
