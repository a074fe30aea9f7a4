import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitReadObjects, serialize } from "../../src/git/repo.js";
import { commitPaths, commitWorktree } from "../../src/git/worktree.js";
import { makeRepo, removedAfterEach, type TestRepo } from "../helpers/git-repo.js";

const newRepo = removedAfterEach(afterEach, makeRepo);

function setUp(): { repo: TestRepo; tip: string } {
  const repo = newRepo();
  return { repo, tip: repo.git("rev-parse", "HEAD").trim() };
}

describe("commitWorktree and commitPaths", () => {
  it("commit what changed, as the factory, and answer with the new HEAD", async () => {
    const { repo, tip } = setUp();
    repo.write("src/a.js", "a\n");
    const commit = await commitWorktree(repo.dir, "factory: attempt 1 of P01");
    expect(commit).not.toBe(tip);
    expect(repo.git("rev-parse", "HEAD").trim()).toBe(commit);
    expect(repo.git("log", "-1", "--format=%an %s").trim()).toBe("factory factory: attempt 1 of P01");
    expect(repo.git("show", "--name-only", "--format=", commit).trim()).toBe("src/a.js");
  });

  it("with nothing to commit, leave HEAD where it was (no empty commit, no error)", async () => {
    const { repo, tip } = setUp();
    expect(await commitWorktree(repo.dir, "factory: nothing")).toBe(tip);
    // Untracked but ignored by the paths given: still nothing staged.
    repo.write("notes.txt", "n\n");
    expect(await commitPaths(repo.dir, [], "factory: nothing")).toBe(tip);
    expect(repo.git("rev-list", "--count", "HEAD").trim()).toBe("1");
  });

  it("a commit that fails with changes staged is an error naming git's reason, not 'nothing to commit'", async () => {
    const { repo, tip } = setUp();
    repo.write("src/a.js", "a\n");
    // The branch is locked by someone else: staging works, the commit cannot move the branch.
    writeFileSync(join(repo.dir, ".git/refs/heads/main.lock"), "");
    await expect(commitWorktree(repo.dir, "factory: attempt 1 of P01")).rejects.toThrow(/git commit .*failed: .*main\.lock/s);
    expect(repo.git("rev-parse", "HEAD").trim()).toBe(tip);
  });
});

describe("gitReadObjects", () => {
  it("a read of commits named by full ids does not wait for the directory's call in progress; one naming HEAD does", async () => {
    const { repo, tip } = setUp();
    let release = (): void => undefined;
    const held = serialize(repo.dir, () => new Promise<void>((resolve) => (release = resolve)));
    const byId = gitReadObjects(repo.dir, [tip], ["ls-tree", "--name-only", tip]);
    const byName = gitReadObjects(repo.dir, ["HEAD"], ["ls-tree", "--name-only", "HEAD"]);
    let namedDone = false;
    void byName.then(() => (namedDone = true));
    expect(await byId).toEqual({ ok: true, out: "README.md\n" });
    await new Promise((resolve) => setTimeout(resolve, 300)); // time enough for a git that did not wait
    expect(namedDone).toBe(false); // still behind the call in progress
    release();
    await held;
    expect(await byName).toEqual({ ok: true, out: "README.md\n" });
  });
});
