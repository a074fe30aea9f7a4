import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { leftGitLocks, lockInMessage } from "../../src/git/locks.js";
import { makeRepo, removedAfterEach } from "../helpers/git-repo.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
const newRepo = removedAfterEach(afterEach, makeRepo);
const honest = { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } };

describe("a lock file a killed git command left", () => {
  for (const lock of [".git/index.lock", ".git/refs/heads/main.lock"]) {
    it(`(${lock}) refuses the run before anything is claimed, naming the file and how to check it is stale (exit 2)`, async () => {
      const target = setUp({ script: honest });
      writeFileSync(join(target.dir, lock), "");
      const { code, out } = await target.run();
      expect(out).toContain(`factory run refused: git's lock file ${join(target.dir, lock)} is left`);
      expect(out).toContain(`\`pgrep -a git\` shows none), remove it: rm '${join(target.dir, lock)}'`);
      expect(out).not.toMatch(/would overwrite|kept moving/);
      expect(code).toBe(2);
      expect((await target.events()).some((event) => event.kind === "claimed")).toBe(false);
    });
  }

  it("honest twin: a lock of another branch, or none, does not stop the run", async () => {
    const target = setUp({ script: honest });
    target.git("branch", "other");
    writeFileSync(join(target.dir, ".git/refs/heads/other.lock"), "");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });

  it("is not one a live process holds: another factory process's landing (its token in the checkout's index lock), or a git command that ends within the wait", async () => {
    const repo = newRepo();
    const index = join(repo.dir, ".git/index.lock");
    writeFileSync(index, `factory ${process.pid} 0e6f-token\n`); // this process is alive: a landing under way
    expect(await leftGitLocks(repo.dir, "main", 0)).toEqual([]);
    writeFileSync(index, "factory 2147483646 0e6f-token\n"); // no such process: left
    expect(await leftGitLocks(repo.dir, "main", 0)).toEqual([index]);
    writeFileSync(index, "");
    const gone = setTimeout(() => rmSync(index, { force: true }), 300); // a git command's lock, released meanwhile
    expect(await leftGitLocks(repo.dir, "main", 5_000)).toEqual([]);
    clearTimeout(gone);
  });

  it("is named from git's own refusal, for one that appears during a run", () => {
    const repo = newRepo();
    writeFileSync(join(repo.dir, ".git/refs/heads/main.lock"), "");
    const refused = spawnSync("git", ["update-ref", "refs/heads/main", "HEAD", "HEAD"], { cwd: repo.dir, encoding: "utf8" });
    expect(refused.status).not.toBe(0);
    expect(lockInMessage(refused.stderr)).toBe(join(repo.dir, ".git/refs/heads/main.lock"));
    writeFileSync(join(repo.dir, ".git/index.lock"), "");
    const indexRefused = spawnSync("git", ["read-tree", "-m", "-u", "HEAD", "HEAD"], { cwd: repo.dir, encoding: "utf8" });
    expect(lockInMessage(indexRefused.stderr)).toBe(join(repo.dir, ".git/index.lock"));
  });
});
