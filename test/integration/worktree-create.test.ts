import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { forgetGitDir, gitDirOf } from "../../src/git/dirs.js";
import { createWorktree, removeWorktree } from "../../src/git/worktree.js";
import { makeRepo, removedAfterEach, type TestRepo } from "../helpers/git-repo.js";

const newRepo = removedAfterEach(afterEach, makeRepo);

function setUp(): { repo: TestRepo; tip: string } {
  const repo = newRepo();
  repo.write("README.md", "hello\n");
  return { repo, tip: repo.commit("readme") };
}

describe("createWorktree", () => {
  it("takes over a registration whose directory was deleted by hand, on the same branch", async () => {
    const { repo, tip } = setUp();
    const path = join(repo.dir, ".factory/worktrees/P01");
    await createWorktree(repo.dir, { path, branch: "factory/P01", start: tip });
    rmSync(path, { recursive: true, force: true }); // git still lists it, with factory/P01 checked out there
    await createWorktree(repo.dir, { path, branch: "factory/P01", start: tip });
    expect(repo.git("-C", path, "rev-parse", "HEAD").trim()).toBe(tip);
    expect(existsSync(join(path, "README.md"))).toBe(true);
    expect(repo.git("worktree", "list", "--porcelain")).not.toContain("prunable");
    await removeWorktree(repo.dir, path);
  });

  it("a worktree made again at a path answers with its new git directory, not the one remembered", async () => {
    const { repo, tip } = setUp();
    const path = join(repo.dir, ".factory/worktrees/P01");
    const elsewhere = join(repo.dir, ".factory/other/P01"); // the same name: git tells them apart by a number
    await createWorktree(repo.dir, { path: elsewhere, start: tip });
    await createWorktree(repo.dir, { path, start: tip });
    const first = await gitDirOf(path);
    rmSync(path, { recursive: true, force: true });
    await removeWorktree(repo.dir, elsewhere); // frees the name: the next one at path gets it
    await createWorktree(repo.dir, { path, start: tip });
    const second = await gitDirOf(path);
    expect(second).not.toBe(first);
    expect(second).toBe(repo.git("-C", path, "rev-parse", "--absolute-git-dir").trim());
    await removeWorktree(repo.dir, path);
  });

  it("finds a worktree's git directory from its .git file, absolute or relative, as git does, and asks git for a checkout's own", async () => {
    const { repo, tip } = setUp();
    const path = join(repo.dir, ".factory/worktrees/P01");
    await createWorktree(repo.dir, { path, start: tip });
    const asGit = () => repo.git("-C", path, "rev-parse", "--absolute-git-dir").trim();
    expect(await gitDirOf(path)).toBe(asGit());
    writeFileSync(join(path, ".git"), readFileSync(join(path, ".git"), "utf8").replace(/gitdir: .*/, "gitdir: ../../../.git/worktrees/P01"));
    forgetGitDir(path);
    expect(await gitDirOf(path)).toBe(asGit());
    expect(await gitDirOf(repo.dir)).toBe(join(repo.dir, ".git"));
    await removeWorktree(repo.dir, path);
  });
});
