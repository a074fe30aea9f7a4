import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { approve } from "../../src/commands/approve.js";
import { diff } from "../../src/commands/diff.js";
import { reject } from "../../src/commands/reject.js";
import { reset } from "../../src/commands/reset.js";
import { run } from "../../src/commands/run.js";
import { status } from "../../src/commands/status.js";
import { unblock } from "../../src/commands/unblock.js";
import { runLockPath } from "../../src/ledger/run-lock.js";
import { appendEvents } from "../../src/ledger/store.js";
import { bufferOutput } from "../../src/log/output.js";
import { worktreePath } from "../../src/loop/context.js";
import { FACTORY_BIN } from "../helpers/cli.js";
import { DEFAULT_GATES, DOUBLE_JS, DOUBLE_TEST_FOR, type LoopRepo, SCRIPTED_AGENT, useLoopRepos } from "../helpers/loop-repo.js";

/** A person scripting the command (`--yes`). */
const person = { yes: true, input: Readable.from([]) };

const setUp = useLoopRepos(afterEach);

const honest = { write: { "src/double.js": DOUBLE_JS } };
const signal = new AbortController().signal;

async function approveAs(target: LoopRepo, options: { yes?: boolean; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const output = bufferOutput();
  const code = await approve({
    cwd: options.cwd ?? target.dir,
    id: "P01",
    yes: options.yes ?? true,
    output,
    signal,
    input: Object.assign(Readable.from([]), { isTTY: false }),
    env: options.env ?? {},
  });
  return { code, out: output.text() };
}

/** `factory approve P01 --yes` as a person runs it, sent `signal` a second after its re-gate begins. */
function approveCli(cwd: string, signal: NodeJS.Signals): Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [FACTORY_BIN, "approve", "P01", "--yes"], { cwd, env: { ...process.env, NO_COLOR: "1" } });
  let [stdout, stderr] = ["", ""];
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    if (stdout.includes("re-gate:")) setTimeout(() => child.kill(signal), 1_000);
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on("close", (status, killedBy) => resolve({ status, signal: killedBy, stderr })));
}

describe("the human gate", () => {
  it("holds a human-gated packet and merges exactly the approved tree only after approve", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    const { code, out } = await target.run();
    expect(code).toBe(0); // the queue drained: the held packet waits, nothing failed
    expect(out).toContain("P01 awaits a person: factory approve P01");
    const shown = bufferOutput();
    expect(await diff({ cwd: target.dir, id: "P01", output: shown })).toBe(0);
    expect(shown.text()).toMatch(/^# P01: held attempt 1, [0-9a-f]{10}\.\.[0-9a-f]{10}\n/);
    expect(shown.text()).toContain("+  return n * 2;");
    const held = await target.record("P01");
    expect(held?.status.state).toBe("awaiting_human");
    expect(target.subjects()[0]).toBe("queue");

    expect((await approveAs(target, { env: { FACTORY_ROLE: "implementer" } })).code).toBe(2);
    expect((await approveAs(target, { cwd: worktreePath(target.dir, "P01") })).out).toContain("inside a factory worktree");
    expect((await approveAs(target, { yes: false })).out).toContain("needs a person");
    expect(target.subjects()[0]).toBe("queue");
    expect((await target.events("P01")).some((event) => event.kind === "approved")).toBe(false);

    // What a person is shown is the review as the factory recorded it, not a file in the run directory.
    writeFileSync(`${target.dir}/.factory/runs/P01/attempt-1/reviewer-output.json`, JSON.stringify({ verdict: "accept", invariants: [{ id: "doubles", status: "held", evidence: "rewritten:1" }] }));
    const approved = await approveAs(target);
    expect(approved.out).toMatch(/Review: accept\n {2}held {9}doubles {2}\(src\/double\.js:1\)/);
    expect(approved.out).not.toContain("rewritten");
    expect(approved.code).toBe(0);
    const tree = held?.status.state === "awaiting_human" ? held.status.tree : "";
    expect(target.git("rev-parse", "main^{tree}").trim()).toBe(tree);
    expect((await target.events("P01")).find((event) => event.kind === "approved")).toMatchObject({ by: "Test User", tree });
    expect(target.git("log", "-1", "--format=%B", "main")).toContain("Factory-Approved-By: Test User");
    expect(target.targetTestsPass()).toBe(true);
  });

  it("re-gates the approved work when the target moved, then merges the combined tree", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    await target.run();
    target.write("src/other.js", "export const other = 1;\n");
    target.commit("someone else lands work");
    const { code, out } = await approveAs(target);
    expect(code).toBe(0);
    expect(out).toContain("re-gate");
    expect(target.read("src/other.js")).toBe("export const other = 1;\n");
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    expect(target.git("rev-list", "--parents", "-1", "main").trim().split(" ")).toHaveLength(2); // a squash: one parent
  });

  it("git's index lock a stopped approval left in the worktree is removed with a notice, and the packet lands; without one, no notice", async () => {
    for (const left of [true, false]) {
      const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
      await target.run();
      target.write("src/other.js", "export const other = 1;\n");
      target.commit("someone else lands work");
      // Where a `git reset` killed mid-way leaves it: the worktree's git directory in the repository.
      const lock = join(target.dir, ".git/worktrees/P01/index.lock");
      if (left) writeFileSync(lock, "");
      const { code, out } = await approveAs(target);
      expect(out.includes(`notice: removed git's lock file ${lock}, left in P01's worktree`)).toBe(left);
      expect(out).not.toContain("internal error");
      expect(code).toBe(0);
      expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    }
  }, 60_000);

  it("an approval stopped during its re-gate, by kill -9 or Ctrl-C, leaves the packet approvable: the next approve lands it", async () => {
    // The slow gate sleeps once the tip has src/other.js: in the approval's re-gate, not in the run.
    const slow = `\n  [[surfaces.app.gates]]\n  name = "slow"\n  run = "if [ -f src/other.js ]; then sleep 5; fi"\n`;
    const target = setUp({ gates: `${DEFAULT_GATES}${slow}`, packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    await target.run();
    const held = target.git("rev-parse", "factory/P01").trim();
    target.write("src/other.js", "export const other = 1;\n");
    target.commit("someone else lands work");
    const killed = await approveCli(target.dir, "SIGKILL");
    expect(killed.signal).toBe("SIGKILL");
    expect(target.git("rev-parse", "factory/P01").trim()).not.toBe(held); // the re-gate had merged the tip into it

    const interrupted = await approveCli(target.dir, "SIGINT");
    expect(interrupted.stderr).toContain("factory approve interrupted: nothing was merged; P01 is still held");
    expect(interrupted.stderr).not.toContain("internal error");
    expect(interrupted.status).toBe(130);
    expect((await target.record("P01"))?.status.state).toBe("awaiting_human");

    const { code, out } = await approveAs(target);
    expect(out).toContain("re-gated from the start");
    expect(code).toBe(0);
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    expect(target.subjects().filter((subject) => subject.includes("[P01]"))).toHaveLength(1);
  }, 60_000);

  it("held work survives a lost ledger: status shows it held again, run does not redo it, approve lands it", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    expect((await target.run()).out).toContain("P01#1 → awaiting_human");
    const calls = () => target.events("P01").then((events) => events.filter((event) => event.kind === "agent-finished").length);
    expect(await calls()).toBe(2);
    renameSync(join(target.dir, ".factory/state/ledger.jsonl"), join(target.dir, ".factory/state/ledger.jsonl.aside"));

    const output = bufferOutput();
    expect(await status({ cwd: target.dir, id: undefined, json: false, output })).toBe(0);
    expect(output.text()).toContain("notice: P01's held attempt, kept in git (refs/factory/held/P01), is recorded again");
    expect(output.text()).toMatch(/P01 +awaiting_human/);
    const { out } = await target.run();
    expect(out).not.toContain("P01#2");
    expect(await calls()).toBe(2); // its implementer and reviewer calls, restored with their costs; none made again
    const approved = await approveAs(target);
    expect(approved.out).toMatch(/Review: accept\n {2}held {9}doubles/); // the review, restored from git
    expect(approved.code).toBe(0);
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    expect(target.git("for-each-ref", "refs/factory/").trim()).toBe(""); // merged: nothing held is kept any more
  });

  it("two approvals of one held packet merge it once; the second says it is merged, and a late reject changes nothing", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    await target.run();
    const [first, second] = [bufferOutput(), bufferOutput()];
    const codes = await Promise.all([first, second].map((output) => approve({ cwd: target.dir, id: "P01", output, signal, env: {}, ...person })));
    expect([...codes].sort()).toEqual([0, 2]);
    expect(first.text() + second.text()).toContain("P01 is merged already");
    expect(target.subjects().filter((subject) => subject.includes("[P01]"))).toHaveLength(1);
    expect((await target.events("P01")).filter((event) => event.kind === "merged")).toHaveLength(1);
    const late = bufferOutput();
    expect(await reject({ cwd: target.dir, id: "P01", reason: "too late", output: late, env: {}, ...person })).toBe(2);
    expect((await target.record("P01"))?.status.state).toBe("merged");
  }, 60_000);

  it("reject sends the packet back with the reason as feedback, which the next implementer and reviewer both see", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    target.write(".factory/conventions.md", "Name functions after what they return.\n");
    target.commit("conventions");
    await target.run();
    expect(target.read(".factory/runs/P01/attempt-1/implementer-prompt.md")).toContain("## The project's conventions\n\nName functions after what they return.");
    const output = bufferOutput();
    expect(await reject({ cwd: target.dir, id: "P01", reason: "looks fine to me", output, env: { CLAUDECODE: "1" }, ...person })).toBe(2);
    // Without --yes and without a terminal (an agent's pipe), nothing changes.
    const piped = bufferOutput();
    expect(await reject({ cwd: target.dir, id: "P01", reason: "r", output: piped, env: {}, yes: false, input: Readable.from(["P01\n"]) })).toBe(2);
    expect(piped.text()).toContain("factory reject needs a person: run it in a terminal and type P01, or pass --yes");
    expect(await reject({ cwd: target.dir, id: "P01", reason: "  ", output, env: {}, ...person })).toBe(2);
    expect((await target.record("P01"))?.status.state).toBe("awaiting_human");
    expect(target.git("for-each-ref", "--format=%(refname)", "refs/factory/").trim()).toBe("refs/factory/held/P01");
    expect(await reject({ cwd: target.dir, id: "P01", reason: "name it twice() instead", output, env: {}, ...person })).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("queued");
    expect(target.git("for-each-ref", "refs/factory/").trim()).toBe(""); // sent back: no held work is kept to be restored
    await target.run();
    expect(target.read(".factory/runs/P01/attempt-2/implementer-prompt.md")).toContain("A person rejected the last attempt: name it twice() instead");
    const reviewer = target.read(".factory/runs/P01/attempt-2/reviewer-prompt.md");
    expect(reviewer).toContain("## Why the last attempt was sent back\n- A person rejected the last attempt: name it twice() instead");
    expect(reviewer).toContain("Scripted work on P01, attempt 2."); // the implementer's own summary, as a claim
    // Before asking, approve shows the diff, the implementer's summary and why the last attempt was sent back.
    const shown = bufferOutput();
    expect(await approve({ cwd: target.dir, id: "P01", output: shown, signal, env: {}, yes: false, input: Readable.from([]) })).toBe(2);
    expect(shown.text()).toContain("+export function double(n) {");
    expect(shown.text()).toContain("The implementer says (a claim, checked by the gates and the review):\n  > Scripted work on P01, attempt 2.");
    expect(shown.text()).toContain("This attempt was told why the last one was sent back:\n  - A person rejected the last attempt: name it twice() instead");
  });
});

describe("landing", () => {
  it("lands beside unrelated uncommitted work in the checkout, leaving every byte of it as it was", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("README.md", "my staged notes\n");
    target.git("add", "README.md");
    target.write("src/calc.js", "// my uncommitted edit\n");
    target.write("notes.txt", "untracked notes\n");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.subjects()[0]).toBe("feat: Add double [P01]");
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
    expect(target.read("src/calc.js")).toBe("// my uncommitted edit\n");
    expect(target.read("README.md")).toBe("my staged notes\n");
    expect(target.read("notes.txt")).toBe("untracked notes\n");
    expect(target.git("status", "--porcelain").split("\n").filter(Boolean).sort()).toEqual(["A  README.md", " M src/calc.js", "?? notes.txt"].sort());
    expect(target.git("show", "--name-only", "--format=", "main").trim().split("\n")).toEqual(["src/double.js", "test/double.test.js"]); // none of the user's files went in
  });

  it("waits when git would overwrite an uncommitted file, naming it, and the next run lands it without a new attempt", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("src/double.js", "// my own draft\n");
    const first = await target.run();
    expect(first.out).toContain("merge-blocked");
    expect((await target.record("P01"))?.reason).toMatch(/would overwrite src\/double\.js/);
    expect(target.read("src/double.js")).toBe("// my own draft\n");
    expect(target.subjects()[0]).toBe("queue");

    rmSync(`${target.dir}/src/double.js`);
    const second = await target.run();
    expect(second.code).toBe(0);
    expect(target.subjects()[0]).toBe("feat: Add double [P01]");
    const claims = (await target.events("P01")).filter((event) => event.kind === "claimed");
    expect(claims).toHaveLength(1);
  });

  it("moves the target by compare-and-swap when it is not checked out", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.git("checkout", "--quiet", "--detach");
    const { code } = await target.run();
    expect(code).toBe(0);
    expect(target.git("log", "-1", "--format=%s", "main").trim()).toBe("feat: Add double [P01]");
  });
});

describe("the run itself", () => {
  it("runs independent packets side by side with --concurrency 2; the second lands on top of the first, re-gated or batched with it", async () => {
    const triple = "export function triple(n) {\n  return n * 3;\n}\n";
    const target = setUp({ script: { P01: { implementer: [{ ...honest, sleep: 500 }] }, P02: { implementer: [{ write: { "src/triple.js": triple }, sleep: 500 }] } } });
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
    target.commit("second packet");
    const output = bufferOutput();
    const code = await run({ cwd: target.dir, once: false, packet: undefined, maxCost: undefined, concurrency: 2, output, signal });
    expect(code).toBe(0);
    const text = output.text();
    expect(text.indexOf("P02#1 implementer: scripted")).toBeLessThan(text.indexOf("P01#1 → merged")); // both were in flight at once
    // On top of the first: re-gated alone, or gated together with it when both were waiting to land (a merge batch).
    expect(text).toMatch(/P0[12]#1 re-gate|P0[12]#1 batched: its combination with main at \w+ was gated with P0[12], P0[12]/);
    expect(target.subjects().slice(0, 2).sort()).toEqual(["feat: Add double [P01]", "feat: Add triple [P02]"]);
    expect(target.targetTestsPass()).toBe(true);
  }, 60_000);

  it("--keep-going: a blocked packet holds only its dependents, the rest of the queue runs, and the run still ends with exit 1 naming them", async () => {
    const triple = "export function triple(n) {\n  return n * 3;\n}\n";
    const blocked = { result: { status: "blocked", blocked_reason: "the spec contradicts the tests" } };
    const target = setUp({ script: { P01: { implementer: [blocked] }, P02: { implementer: [{ write: { "src/triple.js": triple } }] } } });
    const p01 = target.read("packets/P01-double.toml");
    target.write("packets/P02-triple.toml", p01.replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
    target.write("packets/P03-after.toml", p01.replaceAll("P01", "P03").replace("Add double", "Use double").replace('spec_path = "docs/SPEC.md"', 'spec_path = "docs/SPEC.md"\nrequires = ["P01"]'));
    target.commit("two more packets");
    const output = bufferOutput();
    const code = await run({ cwd: target.dir, once: false, packet: undefined, maxCost: undefined, concurrency: undefined, keepGoing: true, output, signal });
    expect(output.text()).toContain("P02#1 → merged");
    expect(output.text()).toMatch(/run halted: the rest of the queue ran; blocked: P01; waiting on them: P03/);
    expect(code).toBe(1);
    expect(await target.record("P03")).toBeUndefined(); // never claimed
    const none = bufferOutput();
    expect(await diff({ cwd: target.dir, id: "P03", output: none })).toBe(2);
    expect(none.text()).toContain("P03 has no gated attempt to show a diff of");
  }, 60_000);

  it('on_block = "continue" still halts when two packets in a row block for the same reason', async () => {
    const noNetwork = { result: { status: "blocked", blocked_reason: "cannot reach the package index" } };
    const target = setUp({ config: 'on_block = "continue"', script: { P01: { implementer: [noNetwork] }, P02: { implementer: [noNetwork] }, P03: { implementer: [honest] } } });
    const p01 = target.read("packets/P01-double.toml");
    for (const id of ["P02", "P03"]) {
      target.write(`packets/${id}-x.toml`, p01.replaceAll("P01", id));
      target.write(`packets/supplied/${id}/test/double.test.js`, target.read("packets/supplied/P01/test/double.test.js"));
    }
    target.commit("two more packets");
    const { code, out } = await target.run();
    expect(out).toMatch(/run halted: two packets in a row blocked for the same reason \(the machine or the spec, not the work\): P02/);
    expect(code).toBe(1);
    expect(await target.record("P03")).toBeUndefined();
  }, 60_000);

  it("a gate that cannot run is the environment's fault: not counted, and two in a row halt the run", async () => {
    const target = setUp({
      // The shell is on PATH, so preflight passes; the tool it calls is not (a preflight refuses a gate program missing from PATH).
      // A {files} gate is not run at the tip (a whole-tree one broken there is refused before any claim: preflight.test.ts).
      gates: `\n  [[surfaces.app.gates]]\n  name = "lint"\n  run = "sh -c no-such-linter-xyz {files}"\n`,
      planted: null, // no tests gate to run a planted test with
      script: { P01: { implementer: [honest] } },
    });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toContain("two environment errors in a row");
    const record = await target.record("P01");
    expect(record?.attemptsUsed).toBe(0);
    expect(record?.lastAttempt).toBe(2);
    expect(record?.status.state).toBe("queued");
  });

  it("a gate that hangs on the change but finished without it is the work's failure: a {files} lint on the files before the change, a whole-tree gate on the tip", async () => {
    // Each hangs on a file that says HANG: only the change brings one. (A gate that hangs everywhere is the next test's.)
    const hangs = (name: string, run: string, files = "") => `\n  [[surfaces.app.gates]]\n  name = "${name}"\n  run = "${run}"\n  timeout = "2s"\n${files}`;
    const byFile = hangs("lint", "for f in {files}; do if grep -q HANG $f; then sleep 30; fi; done", `  files = "**/*.js"\n`);
    const wholeTree = hangs("build", "if grep -rq HANG src; then sleep 30; fi");
    const edit = { write: { ...honest.write, "src/calc.js": "// HANG\nexport function add(a, b) {\n  return a + b;\n}\n" } };
    for (const gate of [byFile, wholeTree]) {
      const target = setUp({ gates: `${DEFAULT_GATES}${gate}`, allowed: ["src/double.js", "src/calc.js"], forbidden: [], packet: "max_attempts = 1", script: { P01: { implementer: [edit] } } });
      const { code, out } = await target.run();
      expect(out).toMatch(/gate (lint|build): fail — timed out after 2s on this change; (on the same files before it|it finished on the baseline)/);
      expect(code).toBe(1);
      expect(await target.record("P01")).toMatchObject({ attemptsUsed: 1, status: { state: "blocked" } });
    }
  });

  it("a {files} gate that hangs on the files before the change too is the environment's: not counted", async () => {
    const gate = `\n  [[surfaces.app.gates]]\n  name = "lint"\n  run = "sleep 30; echo {files}"\n  timeout = "2s"\n  files = "**/*.js"\n`;
    const edit = { write: { ...honest.write, "src/calc.js": "// a comment\nexport function add(a, b) {\n  return a + b;\n}\n" } };
    const target = setUp({ gates: `${DEFAULT_GATES}${gate}`, allowed: ["src/double.js", "src/calc.js"], forbidden: [], script: { P01: { implementer: [edit] } } });
    const { code, out } = await target.run();
    expect(out).toMatch(/gate lint: error — timed out after 2s/);
    expect(out).toContain("two environment errors in a row");
    expect(code).toBe(1);
    expect(await target.record("P01")).toMatchObject({ attemptsUsed: 0, status: { state: "queued" } });
  });

  it("a hung agent is killed by the idle timeout, with its whole process group", async () => {
    const target = setUp({ idleTimeout: "2s", script: { P01: { implementer: [{ hang: true }] } } });
    await target.run({ once: true });
    const finished = (await target.events("P01")).find((event) => event.kind === "agent-finished");
    expect(finished).toMatchObject({ role: "implementer", outcome: "stalled" });
    const leftovers = spawnSync("pgrep", ["-f", target.scriptFile], { encoding: "utf8" }).stdout.trim();
    expect(leftovers).toBe("");
  }, 30_000);

  it("waits out a rate limit inside the attempt, without spending it or claiming again, and says so; the next packet is claimed after the wait", async () => {
    const triple = "export function triple(n) {\n  return n * 3;\n}\n";
    const target = setUp({ script: { P01: { implementer: [{ rateLimitMs: 3000, ...honest }] }, P02: { implementer: [{ write: { "src/triple.js": triple } }] } } });
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
    target.commit("second packet");
    const { code, out } = await target.run();
    expect(code).toBe(0);
    const notice = out.match(/rate-limited: agent "scripted" waits until (\S+) \(the reset it reported; no attempt spent\); every packet on it waits too/);
    expect(notice).not.toBeNull();
    const until = Date.parse(notice?.[1] ?? "");
    const events = await target.events();
    const claims = events.filter((event) => event.kind === "claimed");
    expect(claims.map((claim) => claim.kind === "claimed" && `${claim.packet}#${claim.attempt}`)).toEqual(["P01#1", "P02#1"]);
    expect(Date.parse(claims[1]?.ts ?? "")).toBeGreaterThanOrEqual(until);
    const calls = events.filter((event) => event.kind === "agent-finished" && event.role === "implementer");
    expect(calls.map((call) => call.kind === "agent-finished" && `${call.packet}#${call.attempt} ${call.outcome}`)).toEqual(["P01#1 rate-limited", "P01#1 ok", "P02#1 ok"]);
    expect(await target.record("P01")).toMatchObject({ status: { state: "merged" }, attemptsUsed: 1, lastAttempt: 1 });
  }, 60_000);

  it("a retry continues from the last attempt's gated work, and is told what failed in the last two attempts, newest first", async () => {
    const wrong = "export function double(n) {\n  return n * 3;\n}\n// kept from attempt 1\n";
    const finding = { severity: "major", file: "src/double.js", line: 4, claim: "the comment says nothing", fix: "say what double does" };
    const target = setUp({
      packet: "max_attempts = 3",
      script: {
        P01: {
          // Attempts 2 and 3 only edit what is there: they fail if they do not start from the last attempt's work.
          implementer: [{ write: { "src/double.js": wrong } }, { run: "sed -i 's/n \\* 3/n * 2/' src/double.js" }, { run: "echo '// double(n) is n * 2' >> src/double.js" }],
          reviewer: [{}, { verdict: "revise", findings: [finding] }, {}],
        },
      },
    });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toContain("P01#3 → merged");
    expect(target.read("src/double.js")).toBe("export function double(n) {\n  return n * 2;\n}\n// kept from attempt 1\n// double(n) is n * 2\n");
    const continued = (await target.events("P01")).filter((event) => event.kind === "continued");
    expect(continued.map((event) => event.kind === "continued" && `${event.attempt}<-${event.fromAttempt}`)).toEqual(["2<-1", "3<-2"]);
    const prompt = target.read(".factory/runs/P01/attempt-3/implementer-prompt.md");
    expect(prompt).toContain("The work of attempt 2 is already in your working directory (uncommitted).");
    const newest = prompt.indexOf("the comment says nothing");
    const older = prompt.indexOf("(two attempts ago) ");
    expect(newest).toBeGreaterThan(0);
    expect(older).toBeGreaterThan(newest);
    expect(prompt.slice(older)).toContain("planted test(s) not passing");
  }, 60_000);

  it('with retry_from = "tip", and after work that broke a guard, a retry starts over', async () => {
    const allowed = ["src/double.js", "src/extra.js"];
    const startsOver = { run: "test ! -e src/extra.js", ...honest }; // fails (the agent crashes) if attempt 1's work is there
    const wrong = { "src/double.js": "export function double(n) {\n  return n * 3;\n}\n", "src/extra.js": "export {};\n" };
    const target = setUp({ allowed, config: `retry_from = "tip"`, script: { P01: { implementer: [{ write: wrong }, startsOver] } } });
    expect((await target.run()).code).toBe(0);
    expect((await target.events("P01")).some((event) => event.kind === "continued")).toBe(false);
    const guarded = setUp({ allowed, script: { P01: { implementer: [{ write: { ...wrong, "src/calc.js": "// touched\n" } }, startsOver] } } });
    expect((await guarded.run()).code).toBe(0);
    expect((await guarded.events("P01")).some((event) => event.kind === "continued")).toBe(false);
  }, 60_000);

  it("a rate limit further away than rate_limit_wait is a failed call: that agent's packets wait for a later run, the rest of the queue goes on", async () => {
    // P01's implementer runs on agent "far" (its tier); P02 and every review on agent "near".
    const agent = (name: string) => `[agents.${name}]\nkind = "command"\nrun = "node ${SCRIPTED_AGENT} SCRIPT"\n`;
    const target = setUp({
      config: `rate_limit_wait = "1s"`,
      agents: `${agent("far")}${agent("near")}\n[tiers]\nbasic = { agent = "near", model = "m" }\nstandard = { agent = "far", model = "m" }\nadvanced = { agent = "near", model = "m" }`,
      script: { P01: { implementer: [{ rateLimitMs: 70 * 365 * 86_400_000 }, honest] }, P02: { implementer: [{ write: { "src/triple.js": "export function triple(n) {\n  return n * 3;\n}\n" } }] } },
    });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replaceAll("SCRIPT", target.scriptFile));
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replace('id = "P01"', 'id = "P02"\ntier = "advanced"').replaceAll("double", "triple").replace("n * 2", "n * 3"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 2, 6));
    target.commit("two agents, two packets");
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 → retry: the implementer reports a rate limit until 20\d\d-.*, further away than rate_limit_wait \(1s\): a failed call/);
    expect(out).toContain("P02#1 → merged");
    expect(out).toMatch(/run halted: the rest of the queue ran; agent "far" is rate-limited until .*, further away than rate_limit_wait: P01 wait/);
    expect(code).toBe(1);
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
    expect((await target.record("P01"))?.status.state).toBe("queued");
  });

  it("Ctrl-C kills the running agent, records the attempt as interrupted and exits 130", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, sleep: 60_000 }] } } });
    const controller = new AbortController();
    // Ctrl-C once the agent is running (after the preflight and the baseline, however long they take here).
    const watch = setInterval(() => {
      if (spawnSync("pgrep", ["-f", target.scriptFile], { encoding: "utf8" }).stdout.trim()) controller.abort();
    }, 200);
    const { code } = await target.run({ signal: controller.signal }).finally(() => clearInterval(watch));
    expect(code).toBe(130);
    const events = await target.events();
    expect(events.find((event) => event.kind === "attempt-interrupted")).toMatchObject({ packet: "P01", attempt: 1, reason: "the run was interrupted" });
    expect(events.find((event) => event.kind === "run-ended")).toMatchObject({ outcome: "interrupted" });
    expect(await target.record("P01")).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0 });
    const leftovers = spawnSync("pgrep", ["-f", target.scriptFile], { encoding: "utf8" }).stdout.trim();
    expect(leftovers).toBe("");
  }, 30_000);

  it("tells the notify command about a block and the end of the run, as JSON on stdin", async () => {
    const log = `${tmpdir()}/factory-notify-${process.pid}-${Date.now()}.jsonl`;
    const target = setUp({ config: `\n[notify]\ncommand = "cat >> ${log}"`, script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }] } } });
    try {
      await target.run();
      const lines = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; packet?: string });
      expect(lines.map((line) => line.event)).toEqual(["blocked", "run-ended"]);
      expect(lines[0]).toMatchObject({ packet: "P01", reason: expect.stringContaining("out of attempts") });
    } finally {
      rmSync(log, { force: true });
    }
  });

  it("stops claiming at the cost cap", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" }, cost: 2 }] } } });
    const { code, out } = await target.run({ maxCost: 1 });
    expect(code).toBe(1);
    expect(out).toContain("the cost cap of $1.00 is reached");
    expect((await target.events("P01")).filter((event) => event.kind === "claimed")).toHaveLength(1);
  });

  it("a self-reported cost no call could spend is suspect: the estimate is charged and the night's budget is not ended", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, cost: 1e308 }] } } });
    const { code, out } = await target.run({ maxCost: 10 });
    expect(out).toContain("reported a cost of 1e+308, more than one call on tier");
    expect(out).not.toContain("cost cap");
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const finished = (await target.events("P01")).find((event) => event.kind === "agent-finished" && event.role === "implementer");
    expect(finished).toMatchObject({ suspectCost: "1e+308", estimatedUsd: 1 });
  });

  it("--once runs a single attempt", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }, honest] } } });
    const { code } = await target.run({ once: true });
    expect(code).toBe(0);
    expect((await target.events("P01")).filter((event) => event.kind === "claimed")).toHaveLength(1);
    expect((await target.record("P01"))?.status.state).toBe("queued");
  });

  it("recovers an attempt left in flight by a dead run, taking over its lock", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
    mkdirSync(dirname(runLockPath(target.dir)), { recursive: true });
    writeFileSync(runLockPath(target.dir), JSON.stringify({ run: "old", pid: dead, host: hostname(), startedAt: "2026-01-01T00:00:00Z" }));
    await appendEvents(target.dir, [{ kind: "claimed", packet: "P01", attempt: 1, sha256: "whatever", run: "old", pid: dead, host: hostname() }]);
    const { code, out } = await target.run();
    expect(out).toContain("took over the run lock");
    expect(code).toBe(0);
    const kinds = (await target.events()).map((event) => event.kind);
    expect(kinds).toContain("run-lock-taken-over");
    expect(kinds).toContain("attempt-interrupted");
    expect((await target.events("P01")).filter((event) => event.kind === "claimed").map((event) => "attempt" in event && event.attempt)).toEqual([1, 2]);
  });

  it("refuses to start while another live run holds the lock", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    mkdirSync(dirname(runLockPath(target.dir)), { recursive: true });
    writeFileSync(runLockPath(target.dir), JSON.stringify({ run: "live", pid: process.pid, host: hostname(), startedAt: "now" }));
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toContain("another run holds");
    expect(await target.events("P01")).toEqual([]);
  });

  it("unblock gives a blocked packet more attempts; reset starts it over; a merged version cannot be reset", async () => {
    const wrong = (n: number) => ({ write: { "src/double.js": `export const double = (n) => n + ${n};\n` } });
    // The scripted agent's steps go by attempt number, which keeps counting across a reset.
    const target = setUp({ script: { P01: { implementer: [wrong(1), wrong(2), wrong(3), wrong(4), honest] } } });
    await target.run();
    expect((await target.record("P01"))?.status.state).toBe("blocked");
    const output = bufferOutput();
    expect(await reset({ cwd: target.dir, id: "P01", output, env: {}, ...person })).toBe(0);
    expect(await target.record("P01")).toMatchObject({ attemptsUsed: 0, status: { state: "queued" } });
    await target.run();
    expect((await target.record("P01"))?.status.state).toBe("blocked");
    for (const refusedCommand of [
      () => unblock({ cwd: target.dir, id: "P01", attempts: 1, output, env: {}, yes: false, input: Readable.from([]) }),
      () => reset({ cwd: target.dir, id: "P01", output, env: {}, yes: false, input: Readable.from([]) }),
    ])
      expect(await refusedCommand()).toBe(2);
    expect((await target.record("P01"))?.status.state).toBe("blocked");
    expect(await unblock({ cwd: target.dir, id: "P01", attempts: 1, output, env: {}, ...person })).toBe(0);
    expect((await target.run()).code).toBe(0);
    expect(target.subjects()[0]).toBe("feat: Add double [P01]");
    const refused = bufferOutput();
    expect(await reset({ cwd: target.dir, id: "P01", output: refused, env: {}, ...person })).toBe(2);
    expect(refused.text()).toContain("a reset would land it twice");
    expect(await unblock({ cwd: target.dir, id: "P01", attempts: 1, output, env: {}, ...person })).toBe(2);
  }, 120_000);
});
