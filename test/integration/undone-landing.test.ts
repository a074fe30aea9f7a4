import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

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

    const said = `P01 landed as ${landing.slice(0, 10)}, but main no longer has it: every file it changed (src/double.js, test/double.test.js) is back as it was before it, undone by ${undo.slice(0, 10)} ("my notes"). To bring it back: git cherry-pick ${landing.slice(0, 10)} (or, if ${undo.slice(0, 10)} did nothing else, git revert ${undo.slice(0, 10)}); if it was undone on purpose: factory acknowledge P01`;
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

  it("a person's deliberate revert, acknowledged, is no longer warned about; the ledger keeps it merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect((await target.run()).code).toBe(0);
    target.git("revert", "--no-edit", "HEAD");
    expect(runCli(["status"], target.dir).stderr).toContain("if it was undone on purpose: factory acknowledge P01");
    const acknowledged = runCli(["acknowledge", "P01", "--yes"], target.dir);
    expect(acknowledged.code, acknowledged.stderr).toBe(0);
    expect(runCli(["status"], target.dir).stderr).not.toContain("no longer has it");
    expect((await target.record("P01"))?.status.state).toBe("merged");
  }, 60_000);
});

/** P02, which requires P01 (adds src/f2.js), beside the loop repository's P01. */
function withP02(target: LoopRepo): void {
  target.write(
    "packets/P02-f2.toml",
    `id = "P02"\ngoal = "Add f2"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\nallowed_paths = ["src/f2.js"]\nrequires = ["P01"]\nbrief = "Add src/f2.js exporting f2(n), which returns n * 2."\n\n[[invariants]]\nid = "multiplies"\nassert = "f2(n) is n * 2"\n`,
  );
  target.write("packets/supplied/P02/test/f2.test.js", DOUBLE_TEST_FOR("f2", 2, 4));
  target.commit("P02");
}

describe("a landing removed from the target's history (a force-push, a reset)", () => {
  const F2 = { write: { "src/f2.js": "export function f2(n) {\n  return n * 2;\n}\n" } };
  it("is never a plain merged: status names it with the tip and the fork, the run does not claim what requires it; reset lands it again", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }, { write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: [F2] } } });
    withP02(target);
    const before = target.git("rev-parse", "main").trim();
    expect((await target.run({ packet: "P01" })).code).toBe(0);
    const landing = target.git("rev-parse", "main").trim();
    expect(landing).not.toBe(before);
    // A person puts main back to before the landing, and goes on from there.
    target.git("reset", "--quiet", "--hard", before);
    target.write("notes.txt", "my notes\n");
    const tip = target.commit("my notes");

    const said = `P01 landed as ${landing.slice(0, 10)}, but main no longer contains it: main was rewritten (a force-push or a reset) to ${tip.slice(0, 10)}, which parts from it at ${before.slice(0, 10)}. To land it again: factory reset P01; to accept it is gone: factory acknowledge P01`;
    const status = runCli(["status"], target.dir);
    expect(status.stderr).toContain(`warning: ${said}`);
    const json = JSON.parse(runCli(["status", "--json"], target.dir).stdout) as { packets: { id: string; state: string; note: string | null }[] };
    expect(json.packets.find((row) => row.id === "P01")).toMatchObject({ state: "merged", note: expect.stringContaining(`its landing ${landing.slice(0, 10)} is no longer on main`) });

    const run = await target.run();
    expect(run.out).toContain(`P01: warning: ${said}`);
    expect(run.out).toContain("P02: not claimed: it requires P01 whose landing main no longer has (above)");
    expect(await target.events("P02")).toEqual([]); // never claimed, nothing paid

    // Landing it again: reset re-queues it; the next run lands P01, then P02.
    expect(runCli(["reset", "P01", "--yes"], target.dir).code).toBe(0);
    const again = await target.run();
    expect(again.code, again.out).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P02"))?.status.state).toBe("merged");
    expect(runCli(["status"], target.dir).stderr).not.toContain("no longer contains it");
    expect(target.read("notes.txt")).toBe("my notes\n");
  }, 120_000);

  it("acknowledged, it is accepted as gone: no warning, and what requires it may run; a landing still on main cannot be acknowledged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: [F2] } } });
    withP02(target);
    const before = target.git("rev-parse", "main").trim();
    expect((await target.run({ packet: "P01" })).code).toBe(0);
    const refused = runCli(["acknowledge", "P01", "--yes"], target.dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("P01's landing is on main; there is nothing to acknowledge");
    target.git("reset", "--quiet", "--hard", before);
    const acknowledged = runCli(["acknowledge", "P01", "--yes"], target.dir);
    expect(acknowledged.code, acknowledged.stderr).toBe(0);
    expect(runCli(["status"], target.dir).stderr).not.toContain("no longer contains it");
    const run = await target.run();
    expect(run.out).not.toContain("not claimed");
    expect((await target.events("P02")).some((event) => event.kind === "claimed")).toBe(true);
  }, 120_000);
});
