import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkGitFile, FACTORY_WORKTREES, GitFileTampered, gitFileProblem } from "../../src/git/git-file.js";

const file = (size = 60) => ({ isFile: () => true, isSymbolicLink: () => false, size });
const wt = "/cache/factory/worktrees/repo-1/P01";
const admin = "/home/me/repo/.git/worktrees/P01";

describe("a linked worktree's .git file", () => {
  it("is accepted as git wrote it: a gitdir under a repository's worktrees/ that points back", () => {
    expect(gitFileProblem(wt, file(), `gitdir: ${admin}\n`, `${wt}/.git\n`)).toBeUndefined();
    expect(gitFileProblem(wt, { isFile: () => false, isSymbolicLink: () => false, size: 0 }, "", undefined)).toBeUndefined(); // a checkout's own .git directory
  });

  it("is refused when it points inside the worktree, elsewhere, nowhere, or does not point back; or is a link or too big", () => {
    expect(gitFileProblem(wt, file(), `gitdir: ${wt}/.fake-git\n`, `${wt}/.git`)).toContain("points inside the worktree");
    expect(gitFileProblem(wt, file(), "gitdir: /tmp/evil\n", `${wt}/.git`)).toContain("not at a repository's worktree directory");
    expect(gitFileProblem(wt, file(), `gitdir: ${admin}\n`, "/elsewhere/.git")).toContain("does not point back");
    expect(gitFileProblem(wt, file(), `gitdir: ${admin}\n`, undefined)).toContain("does not point back");
    expect(gitFileProblem(wt, file(), "nothing\n", undefined)).toContain("names no git directory");
    expect(gitFileProblem(wt, { isFile: () => false, isSymbolicLink: () => true, size: 10 }, "", undefined)).toContain("symbolic link");
    expect(gitFileProblem(wt, file(10_000), "", undefined)).toContain("not a gitdir line");
  });
});

describe("which checkouts are checked", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("the factory's worktrees only: the user's own submodule, whose .git points into modules/, is theirs and never refused", () => {
    const base = mkdtempSync(join(tmpdir(), "factory-gitfile-"));
    made.push(base);
    const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always", ...args], { cwd, stdio: "pipe" });
    git(base, "init", "-q", "inner");
    git(join(base, "inner"), "commit", "-q", "--allow-empty", "-m", "a");
    git(base, "init", "-q", "outer");
    git(join(base, "outer"), "submodule", "-q", "add", "../inner", "inner");
    expect(() => checkGitFile(join(base, "outer", "inner"))).not.toThrow();
    // The same pointer in a factory worktree is refused.
    const worktree = join(base, "factory", "worktrees", "repo-1", "P01");
    mkdirSync(worktree, { recursive: true });
    writeFileSync(join(worktree, ".git"), "gitdir: ../.git/modules/inner\n");
    expect(() => checkGitFile(worktree)).toThrow(GitFileTampered);
    // Where a cache under a dot-directory gives way to the shared temporary directory (loop/context.ts) too.
    const shared = join(base, "factory-1000", "worktrees", "repo-1", "P01");
    mkdirSync(shared, { recursive: true });
    writeFileSync(join(shared, ".git"), "gitdir: ../.git/modules/inner\n");
    expect(() => checkGitFile(shared)).toThrow(GitFileTampered);
    expect(FACTORY_WORKTREES.test("/var/tmp/factory-1000/worktrees/repo-1/P01/")).toBe(true);
    expect(FACTORY_WORKTREES.test("/home/me/factory-tools/worktrees-old/")).toBe(false);
  });
});
