import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("a packet whose branch is checked out in a worktree somewhere else", () => {
  it("runs: that worktree (its earlier one, kept where worktrees went before) keeps its files, detached, and the run says where it is", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    // P01's earlier worktree, kept where another cache directory put it, with a person's note in it.
    const elsewhere = join(mkdtempSync(join(tmpdir(), "factory-elsewhere-")), "P01");
    cleanups.push(() => rmSync(join(elsewhere, ".."), { recursive: true, force: true }));
    target.git("worktree", "add", "--quiet", "-b", "factory/P01", elsewhere, "main");
    writeFileSync(join(elsewhere, "NOTES.md"), "what I saw in P01's attempt\n");
    const before = target.git("-C", elsewhere, "rev-parse", "HEAD");

    const { code, out } = await target.run();
    expect(out).not.toContain("internal error");
    expect(code, out).toBe(0);
    expect(out).toContain(`P01: its earlier worktree at ${elsewhere} (where worktrees went before) had factory/P01 checked out: it keeps its files, detached at the commit it had`);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    // Nothing of it lost: the note, the commit it had; only the branch went to the new attempt.
    expect(readFileSync(join(elsewhere, "NOTES.md"), "utf8")).toBe("what I saw in P01's attempt\n");
    expect(target.git("-C", elsewhere, "rev-parse", "HEAD")).toBe(before);
    expect(target.git("-C", elsewhere, "branch", "--show-current")).toBe("");
    target.git("worktree", "remove", "--force", elsewhere);
    expect(existsSync(elsewhere)).toBe(false);
  }, 120_000);
});
