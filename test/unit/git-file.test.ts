import { describe, expect, it } from "vitest";
import { gitFileProblem } from "../../src/git/git-file.js";

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
