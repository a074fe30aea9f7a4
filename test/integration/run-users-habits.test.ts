import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * What a user does during a night's run: redirect the run's output into the repository, commit, fetch,
 * switch branches, edit, `git gc`. With the sandbox on, nothing of the packet's can write there, so none of
 * it is the packet's: the run carries on and says what it saw.
 */
const setUp = useLoopRepos(afterEach);
const NO_SANDBOX = '[sandbox]\nkind = "none"';
/** The implementer works for a while: long enough for the user's actions to happen while it runs. */
const slowHonest = { write: { "src/double.js": DOUBLE_JS }, sleep: 2_500 };

/** Resolves once the implementer of P01's first attempt has been started (its prompt file is written). */
async function implementerStarted(target: LoopRepo): Promise<void> {
  const runDir = join(target.dir, ".factory", "runs", "P01", "attempt-1");
  for (let tries = 0; tries < 600; tries++) {
    if (existsSync(runDir) && readdirSync(runDir).some((name) => name.startsWith("implementer") && name.endsWith("-prompt.md"))) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the implementer never started");
}

describe("the user's own work during a run, with the sandbox on", () => {
  it("a log file, an edit, a commit to the target, a fetched ref and git gc are the user's: the packet merges on top of the commit and status says what was seen", async () => {
    const target = setUp({ script: { P01: { implementer: [slowHonest] } } });
    const running = target.run();
    await implementerStarted(target);
    target.write("NOTES.md", "my notes\n");
    target.commit("my own commit while the factory runs");
    appendFileSync(join(target.dir, "night.log"), "started\n");
    target.git("update-ref", "refs/remotes/origin/main", "HEAD");
    target.git("gc", "--quiet");
    appendFileSync(join(target.dir, "src/calc.js"), "// an edit of mine\n");
    const { code, out } = await running;
    expect(out).not.toContain("reached outside");
    expect(out).toMatch(/your repository changed \(yours, not the packet's; the run carries on\): .*a change to night\.log in your checkout appeared/);
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.subjects().slice(1, 2)).toEqual(["my own commit while the factory runs"]);
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    expect(target.read("src/calc.js")).toContain("// an edit of mine");
    const seen = (await target.events("P01")).find((event) => event.kind === "outside-change-seen");
    expect(seen?.kind === "outside-change-seen" ? seen.changes : []).toEqual(expect.arrayContaining(["branch main changed", "ref refs/remotes/origin/main appeared"]));
    // The morning's board says so too, and where to read it all.
    const board = runCli(["status"], target.dir);
    expect(board.stdout).toMatch(/While P01#1 ran, your repository changed \(yours, not the packet's; the run carried on\): .*; see `factory show P01`/);
  });

  it("a hook that appears in .git while the implementer runs still blocks the packet and halts the run: it would run code as the user", async () => {
    const target = setUp({ script: { P01: { implementer: [slowHonest] } } });
    const running = target.run();
    await implementerStarted(target);
    writeFileSync(join(target.dir, ".git", "hooks", "post-merge"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(target.dir, ".git", "hooks", "post-merge"), 0o755);
    const { code, out } = await running;
    expect(out).toMatch(/P01#1 → blocked: the implementer reached outside its worktree: \.git\/hooks\/post-merge appeared/);
    expect(code).toBe(1);
  });
});

describe("the run's own output redirected into the repository", () => {
  it("without the sandbox, `factory run > night.log` in the checkout trips nothing, while another new file there still does", async () => {
    const quiet = setUp({ config: NO_SANDBOX, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect(await runInto(quiet, "night.log")).toBe(0);
    expect(readFileSync(join(quiet.dir, "night.log"), "utf8")).toContain("P01#1 → merged");

    const fired = setUp({ config: NO_SANDBOX, script: {} });
    fired.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: `echo x > ${fired.dir}/other.log` }] } });
    expect(await runInto(fired, "night.log")).toBe(1);
    expect(readFileSync(join(fired.dir, "night.log"), "utf8")).toMatch(/reached outside its worktree: a change to other\.log in your checkout appeared/);
  });
});

/** Runs the built CLI with stdout and stderr redirected into `file` in the target's checkout, as `factory run > file 2>&1` does. */
async function runInto(target: LoopRepo, file: string): Promise<number | null> {
  const fd = openSync(join(target.dir, file), "a");
  try {
    const child = spawn(process.execPath, [FACTORY_BIN, "run"], { cwd: target.dir, stdio: ["ignore", fd, fd], env: { ...process.env, NO_COLOR: "1" } });
    return await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  } finally {
    closeSync(fd);
  }
}
