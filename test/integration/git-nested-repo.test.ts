import { execFileSync, execSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitRun } from "../../src/git/repo.js";
import { commitWorktree, worktreeStatus } from "../../src/git/worktree.js";
import { makeRepo, removedAfterEach } from "../helpers/git-repo.js";

/**
 * The factory's git never recurses into a nested repository: one an agent made in its worktree has a config
 * of its own (here a clean filter that writes a marker), and git outside the sandbox would run it as the user.
 */
const repos = removedAfterEach(afterEach, makeRepo);
const marker = join(tmpdir(), `factory-git-nested-marker-${process.pid}`);
afterEach(() => rmSync(marker, { force: true }));

/** A repository whose committed tree holds a gitlink to a nested repository with a filter, and a file git must hash again. */
function withEvilNestedRepo(): string {
  const repo = repos();
  const nested = join(repo.dir, "lib", "evil");
  execSync(
    [
      `mkdir -p ${nested} && cd ${nested} && git init -q`,
      `git config filter.evil.clean "sh -c 'echo ran > ${marker}; cat'"`,
      "echo '* filter=evil' > .gitattributes && echo data > data.txt",
      "git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -qm nested",
    ].join(" && "),
    { stdio: "ignore" },
  );
  rmSync(marker, { force: true });
  repo.git("add", "--all");
  repo.git("commit", "-q", "-m", "a gitlink");
  execSync(`touch -d '2099-01-01' ${join(nested, "data.txt")}`);
  return repo.dir;
}

describe("the factory's git and a nested repository", () => {
  it("runs nothing of it: status, a diff of the index and the commit of an attempt leave the filter unrun, and the gitlink is not staged", async () => {
    const dir = withEvilNestedRepo();
    await worktreeStatus(dir);
    await gitRun(dir, ["status", "--porcelain=v2"]);
    await gitRun(dir, ["diff-index", "HEAD"]);
    writeFileSync(join(dir, "work.txt"), "the agent's work\n");
    await commitWorktree(dir, "an attempt");
    expect(existsSync(marker)).toBe(false);
    expect(execFileSync("git", ["show", "--name-only", "--format=", "HEAD"], { cwd: dir, encoding: "utf8" }).trim()).toBe("work.txt");
  });

  it("where plain git status would run it (the setup fires)", () => {
    const dir = withEvilNestedRepo();
    execFileSync("git", ["status", "--porcelain"], { cwd: dir, stdio: "ignore" });
    expect(existsSync(marker)).toBe(true);
  });
});
