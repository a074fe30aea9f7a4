import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePath, worktreesDir } from "../../src/loop/context.js";
import { removedUnder } from "../../src/loop/worktree-removed.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

describe("a packet's worktree removed while its attempt runs (a cleaner of the worktrees' directory)", () => {
  it("stops the run naming the worktree, spends no attempt and pays no correction call; the next run lands the packet", async () => {
    // The implementer writes its file, then works on (sleeps) while the worktrees' directory is removed under it.
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, sleep: 3_000 }] } } });
    const place = worktreesDir(target.dir);
    const running = target.run();
    const written = join(worktreePath(target.dir, "P01"), "src", "double.js");
    for (let waited = 0; !existsSync(written); waited += 50) {
      if (waited > 60_000) throw new Error("the implementer never wrote its file");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    rmSync(place, { recursive: true, force: true });
    const { code, out } = await running;
    expect(out).not.toContain("internal error");
    expect(code, out).toBe(1);
    expect(out).toContain(`run halted: its worktree ${worktreePath(target.dir, "P01")} was removed while attempt 1 ran, by something other than the factory`);
    expect(out).toContain("`factory run` starts the packet again (no attempt was spent)");
    // No result file because the worktree went: the implementer is not asked again to write one (a paid call).
    expect(out).not.toContain("implementer (correction)");
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "agent-started").length).toBe(1);
    expect(events.filter((event) => event.kind === "attempt-interrupted").map((event) => (event as { attempt: number }).attempt)).toEqual([1]);

    const again = await target.run();
    expect(again.code, again.out).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
    // Nothing left beside the worktree for a person to find and gc to miss.
    expect(existsSync(place) ? readdirSync(place).filter((name) => name.includes(".orphan-")) : []).toEqual([]);
  });

  it("a worktree never made is not one removed: an attempt that failed before making it is not said to have lost it", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect(await removedUnder(target.dir, worktreePath(target.dir, "P01"), new Error("git worktree add failed"))).toBe(false);
  });

  it("knows a worktree removed under a path that goes through a link (git names it by its real path)", async (context) => {
    const target = setUp({ script: {} });
    const place = mkdtempSync(join(tmpdir(), "factory-linked-"));
    context.onTestFinished(() => rmSync(place, { recursive: true, force: true }));
    mkdirSync(join(place, "real"));
    symlinkSync("real", join(place, "link"));
    target.git("worktree", "add", "-q", "--detach", join(place, "link", "P01"));
    rmSync(join(place, "real", "P01"), { recursive: true, force: true });
    expect(await removedUnder(target.dir, join(place, "link", "P01"), new Error("ENOENT"))).toBe(true);
    target.git("worktree", "prune");
  });
});
