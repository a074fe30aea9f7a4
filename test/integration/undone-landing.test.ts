import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * A landing undone by a person's commit (issue 40 §3): while a landing holds the checkout's index.lock, git
 * tells a person who runs `git commit` to remove the lock; one who does commits the index from before the
 * landing, which silently puts back every file the packet changed. Every factory command that reads the
 * board, and the next run, say so plainly, with the command that brings it back.
 */
const setUp = useLoopRepos(afterEach);

describe("a landing undone on the target by a later commit", () => {
  it("is named by status (text and --json) and by the next run, with the fix; once the fix is applied, nothing is said", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect((await target.run()).code).toBe(0);
    const landing = target.git("rev-parse", "main").trim();
    // The person's commit of the index from before the landing, with a file of their own in it.
    target.git("read-tree", `${landing}^`);
    target.write("notes.txt", "my notes\n");
    target.git("add", "notes.txt");
    target.git("commit", "--quiet", "-m", "my notes");
    const undo = target.git("rev-parse", "main").trim();
    target.git("checkout", "--quiet", "--", ".");
    target.git("clean", "--quiet", "-f", "src", "test");

    const said = `P01 landed as ${landing.slice(0, 10)}, but main no longer has it: every file it changed (src/double.js, test/double.test.js) is back as it was before it, undone by ${undo.slice(0, 10)} ("my notes"). To bring it back: git cherry-pick ${landing.slice(0, 10)} (or, if ${undo.slice(0, 10)} did nothing else, git revert ${undo.slice(0, 10)})`;
    const status = runCli(["status"], target.dir);
    expect(status.stderr).toContain(`warning: ${said}`);
    const json = JSON.parse(runCli(["status", "--json"], target.dir).stdout) as { warnings: string[] };
    expect(json.warnings).toContain(said);
    const run = await target.run();
    expect(run.out).toContain(`P01: warning: ${said}`);

    // The fix it offers, applied: the landing is back, and nothing is said.
    target.git("cherry-pick", landing);
    expect(runCli(["status"], target.dir).stderr).not.toContain("no longer has it");
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
  }, 60_000);

  it("says nothing of a person's later commit that leaves the landing's files alone, or of one that changes them further", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect((await target.run()).code).toBe(0);
    target.write("notes.txt", "my notes\n");
    target.commit("my notes");
    target.write("src/double.js", `${DOUBLE_JS}// reviewed\n`);
    target.commit("a note in double.js");
    const status = runCli(["status"], target.dir);
    expect(status.code).toBe(0);
    expect(status.stderr).not.toContain("no longer has it");
  }, 60_000);
});
