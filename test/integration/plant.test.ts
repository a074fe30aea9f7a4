import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { plant } from "../../src/loop/prepare.js";
import type { Packet } from "../../src/packet/types.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

let repo: TestRepo;
const outside: string[] = [];
afterEach(() => {
  if (repo) {
    repo.git("worktree", "remove", "--force", join(repo.dir, "wt"));
    repo.cleanup();
  }
  for (const dir of outside.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const packet = { id: "P01" } as Packet;

function lsTree(ref: string, prefix = ""): string[] {
  return repo
    .git("ls-tree", "-r", ref, ...(prefix ? [prefix] : []))
    .trim()
    .split("\n")
    .map((line) => line.replace(`\t${prefix}`, "\t"));
}

describe("planting", () => {
  it("copies every planted file's exact bytes and mode: a binary fixture, an executable, a symbolic link", async () => {
    repo = makeRepo();
    const supplied = join(repo.dir, "packets/supplied/P01");
    repo.write("packets/supplied/P01/tests/fixture.bin", "");
    writeFileSync(join(supplied, "tests/fixture.bin"), Buffer.from([0, 255, 13, 10, 0x80, 0xc3, 0]));
    repo.write("packets/supplied/P01/tests/run.sh", "#!/bin/sh\necho ok\n");
    chmodSync(join(supplied, "tests/run.sh"), 0o755);
    symlinkSync("run.sh", join(supplied, "tests/link"));
    repo.write(".gitattributes", "*.bin text eol=crlf\n*.sh export-ignore\n"); // attributes that would alter or drop bytes are not applied
    const tip = repo.commit("planted files");
    repo.git("worktree", "add", "--quiet", "--detach", join(repo.dir, "wt"), tip);

    const planting = await plant({ root: repo.dir }, join(repo.dir, "wt"), packet, tip);
    expect(planting.files.sort()).toEqual(["tests/fixture.bin", "tests/link", "tests/run.sh"]);
    const planted = lsTree(planting.commit, "tests/");
    expect(planted.sort()).toEqual(lsTree(tip, "packets/supplied/P01/tests/").sort());
    expect(repo.git("-C", "wt", "status", "--porcelain")).toBe("");
  });

  it("never writes through a symbolic link the worktree already has", async () => {
    repo = makeRepo();
    const elsewhere = mkdtempSync(join(tmpdir(), "factory-outside-"));
    outside.push(elsewhere);
    symlinkSync(elsewhere, join(repo.dir, "tests"));
    repo.write("packets/supplied/P01/tests/test_x.py", "def test_x():\n    assert True\n");
    const tip = repo.commit("a link where the planted files go");
    repo.git("worktree", "add", "--quiet", "--detach", join(repo.dir, "wt"), tip);
    await expect(plant({ root: repo.dir }, join(repo.dir, "wt"), packet, tip)).rejects.toThrow(/tests in the worktree is not a directory/);
    expect(existsSync(join(elsewhere, "test_x.py"))).toBe(false);
  });
});
