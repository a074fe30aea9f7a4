import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitTry } from "../../src/git/repo.js";
import { fingerprintOutside } from "../../src/guards/tripwire.js";
import { finishCheckout, moveWithCheckout } from "../../src/merge/checkout.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A repository at `from` with its state directory, and `to`: a commit on top of it adding landed.txt, not yet on main. */
function landingToMake(): { from: string; to: string } {
  repo = makeRepo();
  const from = repo.git("rev-parse", "HEAD").trim();
  repo.write("landed.txt", "landed\n");
  repo.git("add", "landed.txt");
  repo.git("commit", "--quiet", "-m", "the landing");
  const to = repo.git("rev-parse", "HEAD").trim();
  repo.git("reset", "--quiet", "--hard", from);
  mkdirSync(join(repo.dir, ".factory/state"), { recursive: true });
  return { from, to };
}

describe("moving the target with its checkout", () => {
  it("no git call of the same process sees the branch moved and the checkout not yet (a concurrent tripwire would call that a change)", async () => {
    const { from, to } = landingToMake();

    let done = false;
    const moving = moveWithCheckout(repo.dir, { branch: "main", checkout: repo.dir, from, to }).finally(() => {
      done = true;
    });
    // One status at a time, each asked as soon as the last one answered: each is queued behind whatever the move has asked by then.
    const seen: string[] = [];
    while (!done) {
      const result = await gitTry(repo.dir, ["status", "--porcelain", "--", "landed.txt"]);
      seen.push(result.ok ? result.out : result.message);
    }
    expect(await moving).toEqual({ kind: "moved" });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.filter((out) => out !== "")).toEqual([]);
    expect(repo.read("landed.txt")).toBe("landed\n");
  });

  it("a tripwire waits out a landing another process has half done (the branch moved, its checkout not yet), and sees the checkout as it ends", async () => {
    const { from, to } = landingToMake();
    repo.git("worktree", "add", "--quiet", "--detach", join(repo.dir, ".factory/worktrees/P01"), from);
    // Another process's landing, half done: its note written, the branch moved, the checkout not yet brought along.
    writeFileSync(join(repo.dir, ".factory/state/checkout-forward.json"), JSON.stringify({ checkout: repo.dir, from, to }));
    repo.git("update-ref", "refs/heads/main", to, from);

    const looking = fingerprintOutside({ root: repo.dir, worktree: join(repo.dir, ".factory/worktrees/P01"), target: "main", home: homedir() });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await finishCheckout(repo.dir, "main")).toContain("brought forward"); // the other process ends its move
    const seen = await looking;
    expect([...seen.keys()].filter((what) => what.includes("your checkout"))).toEqual(["your checkout's HEAD"]);
    expect(seen.get("branch main")).toBe(to);
  });
});
