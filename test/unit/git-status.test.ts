import { afterEach, describe, expect, it } from "vitest";
import { parseStatusV2 } from "../../src/git/status.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const status = () => parseStatusV2(repo.git("status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=matching"));

describe("parseStatusV2, on what git itself prints", () => {
  it("names the branch and commit, and every kind of entry with its path, spaces included", () => {
    repo = makeRepo();
    repo.write("old name.txt", "one\n");
    repo.write("kept.txt", "kept\n");
    repo.write(".gitignore", "*.log\n");
    const head = repo.commit("files");
    repo.git("mv", "old name.txt", "new name.txt");
    repo.write("kept.txt", "edited\n");
    repo.write("dir/untracked file.txt", "u\n");
    repo.write("debug.log", "ignored\n");
    const parsed = status();
    expect(parsed.head).toBe("main");
    expect(parsed.oid).toBe(head);
    expect(parsed.entries).toEqual(
      expect.arrayContaining([
        { path: "new name.txt", code: "R.", from: "old name.txt" },
        { path: "kept.txt", code: ".M" },
        { path: "dir/untracked file.txt", code: "??" },
        { path: "debug.log", code: "!!" },
      ]),
    );
    expect(parsed.entries).toHaveLength(4);
  });

  it("says (detached) with the commit on a detached HEAD, and (initial) before the first commit", () => {
    repo = makeRepo();
    const head = repo.commit("second");
    repo.git("checkout", "--quiet", "--detach");
    expect(status()).toMatchObject({ head: "(detached)", oid: head, entries: [] });
    repo.cleanup();
    repo = makeRepo({ initialCommit: false });
    expect(status()).toMatchObject({ head: "main", oid: "(initial)" });
  });
});
