import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitRun, wantsSignedCommits } from "../../src/git/repo.js";

/** The factory stages exact bytes even when a filter is configured after its last git call (its lookup is remembered). */
let dir: string;
const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "factory-filters-"));
  git("init", "-q", "-b", "main");
  writeFileSync(join(dir, ".git/info/attributes"), "*.txt filter=rewrite\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Stages `a.txt` with "n = 2" through the factory's git and returns the staged blob. */
async function stage(): Promise<string> {
  writeFileSync(join(dir, "a.txt"), "n = 2\n");
  await gitRun(dir, ["add", "a.txt"]);
  return git("cat-file", "blob", ":a.txt");
}

describe("filter overrides", () => {
  it("see a filter added to the repository's config after an earlier lookup", async () => {
    expect(await stage()).toBe("n = 2\n"); // looked up: no filter
    git("config", "filter.rewrite.clean", "sed s/2/3/");
    expect(git("cat-file", "blob", git("hash-object", "-w", "--path=a.txt", "a.txt").trim())).toBe("n = 3\n"); // plain git runs it
    expect(await stage()).toBe("n = 2\n");
  });

  it("see a filter added to a file the config includes, which the lookup cannot key on", async () => {
    const included = join(dir, ".git/included.config");
    writeFileSync(included, "");
    git("config", "include.path", included);
    expect(await stage()).toBe("n = 2\n");
    appendFileSync(included, '[filter "rewrite"]\n\tclean = sed s/2/3/\n');
    expect(git("cat-file", "blob", git("hash-object", "-w", "--path=a.txt", "a.txt").trim())).toBe("n = 3\n");
    expect(await stage()).toBe("n = 2\n");
  });

  it("see a filter in one worktree's own config after a lookup in another worktree of the same repository", async () => {
    git("commit", "-q", "--allow-empty", "-m", "start");
    git("config", "extensions.worktreeConfig", "true");
    const other = `${dir}-other`;
    git("worktree", "add", "-q", other);
    try {
      expect(await stage()).toBe("n = 2\n"); // looked up in the main checkout: no filter
      execFileSync("git", ["config", "--worktree", "filter.rewrite.clean", "sed s/2/3/"], { cwd: other });
      writeFileSync(join(other, "a.txt"), "n = 2\n");
      await gitRun(other, ["add", "a.txt"]);
      expect(execFileSync("git", ["cat-file", "blob", ":a.txt"], { cwd: other, encoding: "utf8" })).toBe("n = 2\n");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("the signing lookup", () => {
  it("sees commit.gpgsign turned on and off between landings, in the repository's config or in a file it includes", async () => {
    expect(await wantsSignedCommits(dir)).toBe(false);
    git("config", "commit.gpgsign", "true");
    expect(await wantsSignedCommits(dir)).toBe(true);
    git("config", "commit.gpgsign", "false");
    expect(await wantsSignedCommits(dir)).toBe(false);
    const included = join(dir, ".git/signing.config");
    writeFileSync(included, "");
    git("config", "include.path", included);
    expect(await wantsSignedCommits(dir)).toBe(false);
    appendFileSync(included, "[commit]\n\tgpgsign = true\n");
    expect(await wantsSignedCommits(dir)).toBe(true);
  });
});
