import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { foldLedger } from "../../src/ledger/fold.js";
import { readLedger } from "../../src/ledger/store.js";
import { worktreesDir } from "../../src/loop/context.js";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { cloneAsWorker } from "../helpers/git-repo.js";
import { makeLoopRepo } from "../helpers/loop-repo.js";

/**
 * The shared remote goes away while a landing needs it: the landing waits it
 * out with backoff, spending nothing, and lands once it answers; past the
 * patience the gated work waits for the next run, which lands it without a new
 * attempt. The remote goes away at a moment the test chooses: the reviewer
 * waits for the test's go-ahead file, so nothing depends on timing.
 */
const cleanups: (() => void)[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid ?? 0), "SIGKILL");
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const HONEST = { write: { "src/double.js": "export function double(n) {\n  return n * 2;\n}\n" } };

function setup(patience: string) {
  const parent = mkdtempSync(join(tmpdir(), "factory-remote-away-"));
  const bare = join(parent, "shared.git");
  const clone = join(parent, "worker");
  const go = join(clone, ".git", "factory-test-go");
  // The reviewer holds until the test has taken the remote away (its git directory is readable in the sandbox).
  const reviewer = { run: `while [ ! -e '${go}' ]; do sleep 0.05; done`, invariants: "held", evidence: "src/double.js:2" };
  const repo = makeLoopRepo({ script: { P01: { implementer: [HONEST], reviewer: [reviewer] } }, config: `[target]\nremote = "origin"\npatience = "${patience}"\n` });
  execFileSync("git", ["clone", "--quiet", "--bare", repo.dir, bare]);
  cloneAsWorker(bare, clone);
  cleanups.push(() => {
    repo.cleanup();
    rmSync(worktreesDir(clone), { recursive: true, force: true });
    rmSync(parent, { recursive: true, force: true });
  });
  const away = `${bare}.away`;
  return {
    bare,
    clone,
    takeAway: () => renameSync(bare, away),
    bringBack: () => renameSync(away, bare),
    goAhead: () => writeFileSync(go, ""),
    start: () => startRun(clone),
    record: async () => foldLedger((await readLedger(clone)).events).packets.get("P01"),
    landed: () => (existsSync(bare) ? execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: bare, encoding: "utf8" }) : ""),
  };
}

function startRun(cwd: string) {
  const child = spawn(process.execPath, [FACTORY_BIN, "run"], { cwd, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.push(child);
  let out = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  const heard = (chunk: Buffer): void => {
    out += String(chunk);
    for (const waiter of waiters.filter((candidate) => out.includes(candidate.text))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  child.stdout.on("data", heard);
  child.stderr.on("data", heard);
  const done = new Promise<{ code: number | null; out: string }>((resolve) => child.on("close", (code) => resolve({ code, out })));
  return {
    done,
    /** Resolves when the run has printed `text`; fails if the run ends first. */
    said: (text: string): Promise<void> =>
      Promise.race([
        new Promise<void>((resolve) => (out.includes(text) ? resolve() : waiters.push({ text, resolve }))),
        done.then(({ out: all }) => {
          if (!all.includes(text)) throw new Error(`the run ended without saying ${JSON.stringify(text)}:\n${all}`);
        }),
      ]),
  };
}

describe("a shared remote that cannot be reached while landing", () => {
  it("is waited out with backoff: said once, nothing spent, and the landing goes on when it answers", async () => {
    const shared = setup("10m");
    const run = shared.start();
    await run.said("P01#1 reviewer:");
    shared.takeAway();
    shared.goAhead();
    await run.said("origin cannot be reached");
    // Meanwhile `status` says which remote the run waits for, and since when.
    const waiting = runCli(["status"], shared.clone);
    expect(waiting.stdout).toMatch(/The run of pid \d+ on .* cannot reach origin since \d{4}-\d\d-\d\dT[\d:.]+Z \(git fetch origin main failed: .*\); its landing waits, nothing is spent meanwhile\./);
    const json = JSON.parse(runCli(["status", "--json"], shared.clone).stdout) as { remote_waits?: { remote: string; since: string; reason: string }[] };
    expect(json.remote_waits).toEqual([expect.objectContaining({ remote: "origin", since: expect.stringMatching(/^\d{4}-/), reason: expect.stringContaining("git fetch origin main failed") })]);
    shared.bringBack();
    const { code, out } = await run.done;
    expect(out).toContain("origin answers again");
    expect(runCli(["status"], shared.clone).stdout).not.toContain("cannot reach origin");
    expect(code).toBe(0);
    expect(out).toMatch(/P01: origin cannot be reached \(git fetch origin main failed: .*\); waiting for it with backoff \(up to 600 s\), nothing is spent meanwhile/);
    expect(out.match(/cannot be reached/g)).toHaveLength(1);
    expect(out).toContain("P01#1 → merged");
    expect(await shared.record()).toMatchObject({ status: { state: "merged" }, attemptsUsed: 1 });
    expect(shared.landed()).toContain("P01");
  });

  it("past the patience the gated work waits, naming the remote and since when; the next run lands it without a new attempt", async () => {
    const shared = setup("1s");
    const run = shared.start();
    await run.said("P01#1 reviewer:");
    shared.takeAway();
    shared.goAhead();
    const first = await run.done;
    expect(first.out).toMatch(/merge-blocked: origin could not be reached since \d{4}-\d\d-\d\dT[\d:.]+Z \(git fetch origin main failed: .*\); the gated work lands on the next run, unspent/);
    const waiting = await shared.record();
    expect(waiting?.pendingLand).toBeDefined();
    expect(waiting?.reason).toMatch(/^merge waits: origin could not be reached since/);

    shared.bringBack();
    const second = await shared.start().done;
    expect(second.code).toBe(0);
    const record = await shared.record();
    expect(record).toMatchObject({ status: { state: "merged", attempt: 1 }, attemptsUsed: 1, lastAttempt: 1 });
    expect(shared.landed()).toContain("P01");
  });
});
