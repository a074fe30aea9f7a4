import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePath, worktreesDir } from "../../src/loop/context.js";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { cloneAsWorker, removedAfterEach } from "../helpers/git-repo.js";
import { DOUBLE_TEST_FOR, type LoopRepo, makeLoopRepo, type Script, testFilesOf } from "../helpers/loop-repo.js";
import { usePostgres } from "../helpers/postgres.js";

/**
 * Several workers, each a separate `factory run --worker` process, draining
 * one queue through one real PostgreSQL ledger: claims leased on the
 * server's clock and fenced, a dead worker's packet taken over after its
 * lease, a stalled one that wakes up writing nothing.
 */
const database = usePostgres("the several-workers tests");
const newRepo = removedAfterEach(afterEach, makeLoopRepo);
const workers: ChildProcess[] = [];
afterEach(() => {
  for (const child of workers.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      for (const pid of descendants(child.pid ?? 0)) tryKill(pid, "SIGKILL");
      tryKill(child.pid ?? 0, "SIGKILL");
    }
  }
});

// Long enough that a worker starved on a loaded machine (two copies of the suite at once: load 9–13 on two cores)
// still renews in time; 3 s let a claim run out there and P03 was taken over ("claimed twice"). Tests of expiry wait
// on the ledger for it, never on a duration.
const LEASE = "8s";

/** A packet's id: P01 … P12. */
const pid = (at: number): string => `P${String(at).padStart(2, "0")}`;

/** A queue of `count` packets, each adding src/fN.js (fN(n) = n * N); by default P03 requires P02. */
function queueRepo(count: number, script: Script, extra = "", p01 = "", requires: Record<number, number[]> = { 3: [2] }): LoopRepo {
  const repo = newRepo({ script, config: `[workers]\nlease = "${LEASE}"\n${extra}`, packet: p01 });
  for (let at = 2; at <= count; at++) {
    const id = pid(at);
    repo.write(
      `packets/${id}-f${at}.toml`,
      `id = "${id}"
goal = "Add f${at}"
spec_commit = "${repo.spec}"
spec_path = "docs/SPEC.md"
allowed_paths = ["src/f${at}.js"]
${requires[at] ? `requires = [${(requires[at] ?? []).map((on) => `"${pid(on)}"`).join(", ")}]` : ""}
brief = '''
Add src/f${at}.js exporting f${at}(n), which returns n * ${at}.
'''

[[invariants]]
id = "multiplies"
assert = "f${at}(n) is n * ${at}"
`,
    );
    repo.write(`packets/supplied/${id}/test/f${at}.test.js`, DOUBLE_TEST_FOR(`f${at}`, 2, 2 * at));
  }
  repo.commit("more packets");
  return repo;
}

/** The honest implementer of packet `at` (P01 is the loop repo's double). */
function honest(at: number, extra: object = {}): object {
  return at === 1
    ? { write: { "src/double.js": "export function double(n) {\n  return n * 2;\n}\n" }, ...extra }
    : { write: { [`src/f${at}.js`]: `export function f${at}(n) {\n  return n * ${at};\n}\n` }, ...extra };
}

function reviewer(at: number): object {
  return { invariants: "held", evidence: at === 1 ? "src/double.js:2" : `src/f${at}.js:2` };
}

interface Worker {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; out: string }>;
  output(): string;
}

function startWorker(repo: LoopRepo, url: string, name: string, env: Record<string, string> = {}): Worker {
  const child = spawn(process.execPath, [FACTORY_BIN, "run", "--worker", name, "--keep-going"], {
    cwd: repo.dir,
    env: { ...process.env, NO_COLOR: "1", FACTORY_LEDGER_URL: url, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  workers.push(child);
  let out = "";
  child.stdout?.on("data", (chunk) => (out += String(chunk)));
  child.stderr?.on("data", (chunk) => (out += String(chunk)));
  const done = new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, out })));
  return { child, done, output: () => out };
}

/** A worker started to stop itself (SIGSTOP) at a stop point, once it has: a failure with its output if it ends first, or never gets there in 120 s. */
async function stoppedAt(repo: LoopRepo, url: string, name: string, point: string): Promise<Worker> {
  const worker = startWorker(repo, url, name, { FACTORY_STOP_AT: point });
  const pid = worker.child.pid ?? 0;
  for (let waited = 0; processState(pid) !== "T"; waited += 50) {
    if (waited > 120_000 || worker.child.exitCode !== null) throw new Error(`worker ${name} never reached ${point}:\n${worker.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return worker;
}

/** The packets the ledger records as merged, sorted. */
function mergedPackets(all: Record<string, unknown>[]): string[] {
  return all
    .filter((event) => event.kind === "merged")
    .map((event) => String(event.packet))
    .sort();
}

/** A worker's end, or a failure naming it with its output once `ms` have passed without it. */
async function within(worker: Worker, ms: number, what: string): Promise<Awaited<Worker["done"]>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} has not ended after ${ms / 1000} s:\n${worker.output()}`)), ms);
  });
  return Promise.race([worker.done, late]).finally(() => clearTimeout(timer));
}

/** Packets P01…P0<count>, each implemented honestly and reviewed once. */
function honestScript(count: number): Script {
  const script: Script = {};
  for (let at = 1; at <= count; at++) script[pid(at)] = { implementer: [honest(at)], reviewer: [reviewer(at)] };
  return script;
}

/** The ledger's events, straight from the database. */
async function events(url: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ found: string | null }>("SELECT to_regclass('factory_events')::text AS found");
    if (!found.rows[0]?.found) return [];
    return (await client.query<{ line: string }>("SELECT line FROM factory_events ORDER BY id")).rows.map((row) => JSON.parse(row.line));
  } finally {
    await client.end();
  }
}

/** Waits (on the ledger's own events, checked every 200 ms, bounded) until `test` holds. */
async function until(url: string, what: string, worker: Worker, test: (all: Record<string, unknown>[]) => boolean, ms = 120_000): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const all = await events(url);
    if (test(all)) return all;
    if (worker.child.exitCode !== null) throw new Error(`the worker ended (exit ${worker.child.exitCode}) before ${what}:\n${worker.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; events: ${all.map((event) => `${event.kind}:${event.packet ?? ""}`).join(" ")}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

async function untilQuery(url: string, what: string, query: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const found = (await client.query(query)).rows.length > 0;
    await client.end();
    if (found) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Each packet claimed once and merged once. */
function expectOnceEach(all: Record<string, unknown>[], ids: string[]): void {
  for (const id of ids) {
    for (const kind of ["claimed", "merged"]) {
      expect(
        all.filter((event) => event.kind === kind && event.packet === id),
        `${id} ${kind}`,
      ).toHaveLength(1);
    }
  }
}

function fences(repo: LoopRepo): string[] {
  return repo.git("log", "--format=%(trailers:key=Factory-Claim,valueonly)", "main").split("\n").filter(Boolean);
}

function trailers(repo: LoopRepo): string[] {
  return repo.git("log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main").split("\n").filter(Boolean);
}

/** A process's state letter from /proc (T: stopped). */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

function descendants(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid) children.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    if (pid > 0) process.kill(pid, signal);
  } catch {
    // gone already
  }
}

describe("several workers on one PostgreSQL ledger", { timeout: 300_000 }, () => {
  it("three workers drain a queue with a dependency: every packet lands exactly once, none is claimed twice", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const count = 6;
    const script: Script = {};
    for (let at = 1; at <= count; at++) script[pid(at)] = { implementer: [honest(at, { sleep: 300 })], reviewer: [reviewer(at)] };
    const repo = queueRepo(count, script);
    const runs = ["w1", "w2", "w3"].map((name) => startWorker(repo, url, name));
    const ends = await Promise.all(runs.map((worker) => worker.done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const all = await events(url);
    const ids = Array.from({ length: count }, (_, at) => `P0${at + 1}`);
    expectOnceEach(all, ids);
    expect(trailers(repo).sort()).toEqual(ids);
    // P03 required P02: it was claimed only after P02 merged.
    const at = (kind: string, id: string): number => all.findIndex((event) => event.kind === kind && event.packet === id);
    expect(at("claimed", "P03")).toBeGreaterThan(at("merged", "P02"));
    // The work was shared: more than one worker claimed.
    expect(new Set(all.filter((event) => event.kind === "claimed").map((event) => event.worker)).size).toBeGreaterThan(1);
    // Every landing names its claim's fence.
    expect(fences(repo)).toHaveLength(count);
    expect(repo.targetTestsPass()).toBe(true);
    // status from the same repository reads the shared ledger.
    const status = runCli(["status", "--json"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(status.code, status.stderr).toBe(0);
    const board = JSON.parse(status.stdout) as { packets: { id: string; state: string }[] };
    expect(board.packets.map((packet) => packet.state)).toEqual(ids.map(() => "merged"));
  });

  it("gated work that waited to land (merge-blocked) is landed by one worker only, under a fence of its own, with no new attempt", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(1, { P01: { implementer: [honest(1)], reviewer: [reviewer(1)] } });
    // A person's uncommitted draft where the landing would write: the gated work waits, unspent.
    repo.write("src/double.js", "// my own draft\n");
    const first = await startWorker(repo, url, "first").done;
    expect(first.out).toContain("merge-blocked");
    expect(repo.read("src/double.js")).toBe("// my own draft\n");
    rmSync(join(repo.dir, "src/double.js"));
    // Two workers see the same waiting landing at once: one claims it, the other is refused the claim.
    const ends = await Promise.all(["w2", "w3"].map((name) => startWorker(repo, url, name).done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const all = await events(url);
    expect(all.filter((event) => event.kind === "claimed")).toHaveLength(1);
    expect(all.filter((event) => event.kind === "merged")).toHaveLength(1);
    expect(trailers(repo)).toEqual(["P01"]);
    const fence = fences(repo);
    expect(fence).toHaveLength(1);
    // Its own fence: a new one, past the attempt's.
    const attemptFence = Number(all.find((event) => event.kind === "claimed")?.fence);
    expect(Number(/fence (\d+)/.exec(fence[0] ?? "")?.[1])).toBeGreaterThan(attemptFence);
  });

  it("kill -9 of a worker mid-attempt: another takes the packet over after the lease; the dead attempt is interrupted, not spent", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    // Attempt 1 never finishes; attempt 2 (the takeover) is honest.
    const repo = queueRepo(1, { P01: { implementer: [{ hang: true }, honest(1)], reviewer: [reviewer(1)] } });
    const first = startWorker(repo, url, "doomed");
    await until(url, "P01 claimed by the first worker", first, (all) => all.some((event) => event.kind === "agent-finished" || (event.kind === "claimed" && event.worker === "doomed")));
    // The agent is running in its sandbox; the worker dies without a word.
    first.child.kill("SIGKILL");
    await first.done;
    // Past its lease on the server's clock, the dead worker is stale on the board, never alive; it still holds P01.
    await untilQuery(url, "the dead worker's lease to run out", "SELECT 1 FROM factory_workers WHERE name = 'doomed' AND lease_until < now()");
    const board = runCli(["status", "--json"], repo.dir, { FACTORY_LEDGER_URL: url });
    const shown = (JSON.parse(board.stdout) as { workers: { name: string; state: string; holds: { packet: string }[] }[] }).workers;
    expect(shown.map((worker) => [worker.name, worker.state, worker.holds.map((hold) => hold.packet)])).toEqual([["doomed", "stale", ["P01"]]]);
    const text = runCli(["status"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(text.stdout).toMatch(/doomed\s+stale/);
    expect(text.stdout).toContain("Stale (past its lease, never renewed): doomed");
    const second = startWorker(repo, url, "heir");
    const end = await second.done;
    expect(end.code, end.out).toBe(0);
    const all = await events(url);
    const interrupted = all.filter((event) => event.kind === "attempt-interrupted" && event.packet === "P01");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]?.attempt).toBe(1);
    expect(String(interrupted[0]?.reason)).toMatch(/worker doomed stopped renewing its claim \(fence \d+\); its lease ran out/);
    expect(all.filter((event) => event.kind === "claimed").map((event) => [event.worker, event.attempt])).toEqual([
      ["doomed", 1],
      ["heir", 2],
    ]);
    expect(all.filter((event) => event.kind === "merged")).toHaveLength(1);
    expect(trailers(repo)).toEqual(["P01"]);
    const record = JSON.parse(runCli(["status", "--json"], repo.dir, { FACTORY_LEDGER_URL: url }).stdout) as { packets: { id: string; state: string; attempts?: string }[] };
    expect(record.packets.find((packet) => packet.id === "P01")?.state).toBe("merged");
    expect((record as unknown as { workers: { name: string; state: string; holds: unknown[] }[] }).workers.find((worker) => worker.name === "heir")).toMatchObject({ state: "ended", holds: [] });
  });

  it("a worker stopped past its lease and continued: it writes nothing more and cannot land; its successor lands once", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    // Attempt 1 takes a while (the worker is frozen meanwhile); attempt 2, the successor's, is quick.
    const repo = queueRepo(1, { P01: { implementer: [honest(1, { sleep: 5_000 }), honest(1)], reviewer: [reviewer(1)] } });
    const stalled = startWorker(repo, url, "sleeper");
    await until(url, "P01 claimed by the first worker", stalled, (all) => all.some((event) => event.kind === "claimed" && event.worker === "sleeper"));
    // Frozen while its agent works (it has written its file and sleeps): the worker then waits on the agent and
    // holds no git lock of the shared checkout a successor needs (frozen mid-`git worktree add`, it could).
    const written = join(worktreesDir(repo.dir), "P01", "src", "double.js");
    for (let waited = 0; !existsSync(written); waited += 50) {
      if (waited > 60_000 || stalled.child.exitCode !== null) throw new Error(`the first worker's agent never wrote its file:\n${stalled.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Frozen whole: the worker and the agent it started, as a suspended laptop or a paused VM would be.
    const frozen = [stalled.child.pid ?? 0, ...descendants(stalled.child.pid ?? 0)];
    for (const pid of frozen) tryKill(pid, "SIGSTOP");
    const successor = startWorker(repo, url, "successor");
    const end = await successor.done;
    expect(end.code, end.out).toBe(0);
    const before = await events(url);
    expect(before.filter((event) => event.kind === "merged")).toHaveLength(1);
    for (const pid of frozen) tryKill(pid, "SIGCONT");
    const woken = await stalled.done;
    expect(woken.out).toMatch(/P01: .*(lost its claim|claim is lost)/);
    const after = await events(url);
    // Nothing the stalled worker wrote for P01 after the takeover.
    const takeover = before.findIndex((event) => event.kind === "claimed" && event.worker === "successor");
    const late = after.slice(takeover).filter((event) => event.packet === "P01" && event.attempt === 1 && event.kind !== "attempt-interrupted");
    expect(late).toEqual([]);
    expect(after.filter((event) => event.kind === "merged")).toHaveLength(1);
    expect(trailers(repo)).toEqual(["P01"]);
  });

  it("a lander stopped with its own candidate and continued after its claim was taken over: it does not bring the candidate up to the new tip in the packet's worktree", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(2, honestScript(2));
    // The lander stops itself (SIGSTOP) holding its own gated candidate, about to land it: as a suspended laptop would.
    const stalled = await stoppedAt(repo, url, "sleeper", "lander-before-batch");
    const pidOf = stalled.child.pid ?? 0;
    // Its claim runs out; the successor takes P01 over, lands it and P02 (main moves past the candidate's fork).
    const successor = startWorker(repo, url, "successor");
    const end = await successor.done;
    expect(end.code, end.out).toBe(0);
    expect(trailers(repo).sort()).toEqual(["P01", "P02"]);
    tryKill(pidOf, "SIGCONT");
    const woken = await stalled.done;
    expect(woken.out).toMatch(/P01: .*(lost its claim|claim is lost)/);
    // Bringing its candidate up to the moved tip would merge and gate in the packet's worktree, which is the successor's
    // (two workers in one checkout): it stops at the claim instead, and leaves no worktree behind.
    expect(woken.out).not.toMatch(/P01#1 re-gate/);
    expect(existsSync(worktreePath(repo.dir, "P01"))).toBe(false);
    const all = await events(url);
    expect(mergedPackets(all)).toEqual(["P01", "P02"]);
    expect(trailers(repo).sort()).toEqual(["P01", "P02"]);
  });

  it("a worker frozen inside a ledger transaction holds the others no longer than its lease: the server ends its session, another worker drains the queue, and the frozen one, continued, doubles nothing", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(2, honestScript(2));
    // It stops itself (SIGSTOP) holding the ledger's lock, in its first ledger transaction: as a paused VM would.
    const frozen = await stoppedAt(repo, url, "frozen", "ledger-transaction");
    const pidOf = frozen.child.pid ?? 0;
    const heir = startWorker(repo, url, "heir");
    // Without the server ending the frozen session, every append of the heir's waits on that lock for ever.
    const end = await within(heir, 120_000, "the second worker");
    expect(end.code, end.out).toBe(0);
    expect(trailers(repo).sort()).toEqual(["P01", "P02"]);
    tryKill(pidOf, "SIGCONT");
    const woken = await within(frozen, 120_000, "the continued worker");
    expect(woken.code, woken.out).toBe(0);
    const all = await events(url);
    expect(mergedPackets(all)).toEqual(["P01", "P02"]);
    expect(all.filter((event) => event.kind === "claimed").map((event) => event.worker)).toEqual(["heir", "heir"]);
    expect(trailers(repo).sort()).toEqual(["P01", "P02"]);
  });

  it("PostgreSQL restarted mid-run: the workers wait and go on by themselves; nothing lost or doubled", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const count = 4;
    const script: Script = {};
    for (let at = 1; at <= count; at++) script[pid(at)] = { implementer: [honest(at, { sleep: 800 })], reviewer: [reviewer(at)] };
    const repo = queueRepo(count, script);
    const runs = ["a", "b"].map((name) => startWorker(repo, url, name));
    await until(url, "a first landing", runs[0] as Worker, (all) => all.some((event) => event.kind === "merged"));
    const cluster = database.cluster();
    const stopped = Date.now();
    await cluster.stopServer();
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // an outage meant to be shorter than the lease; a loaded machine may make it longer
    await cluster.startServer();
    const outage = `the outage lasted ${Date.now() - stopped} ms (lease ${LEASE})`;
    const ends = await Promise.all(runs.map((worker) => worker.done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const said = ends.map((end, at) => `worker ${["a", "b"][at]}:\n${end.out}`).join("\n");
    expect(said).toMatch(/cannot be reached/);
    const all = await events(url);
    // Whatever the outage's length, each packet is claimed once more than it was interrupted, and lands once.
    const story = (id: string): string =>
      `${id}; ${outage}; its events: ${all
        .filter((event) => event.packet === id)
        .map((event) => `${event.kind}#${event.attempt ?? ""}`)
        .join(" ")}\n${said}`;
    for (let at = 1; at <= count; at++) {
      const id = pid(at);
      const claimed = all.filter((event) => event.kind === "claimed" && event.packet === id).length;
      const interrupted = all.filter((event) => event.kind === "attempt-interrupted" && event.packet === id).length;
      expect(claimed - interrupted, story(id)).toBe(1);
      expect(
        all.filter((event) => event.kind === "merged" && event.packet === id),
        story(id),
      ).toHaveLength(1);
    }
    expect(trailers(repo).sort()).toEqual(["P01", "P02", "P03", "P04"]);
    const verify = runCli(["ledger", "verify"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/the hash chain holds, events 1–\d+: 4 packet\(s\), 2 run\(s\)/);
  });

  it("three workers in their own clones drain twelve packets with dependencies and a human-gated one onto one bare remote by push: each once, the remote's main green; a fourth clone's status shows it and its approve lands the held one", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const count = 12;
    const script: Script = {};
    for (let at = 1; at <= count; at++) script[pid(at)] = { implementer: [honest(at, { sleep: 300 })], reviewer: [reviewer(at)] };
    const requires = { 3: [2], 7: [6], 12: [10, 11] };
    const repo = queueRepo(count, script, '[target]\nremote = "origin"\n', 'gate = "human"', requires);
    const { remote, clones } = withRemote(repo, 4, context.onTestFinished);
    const runs = clones.slice(0, 3).map((dir, at) => startWorker({ ...repo, dir }, url, `m${at + 1}`));
    const ends = await Promise.all(runs.map((worker) => worker.done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const all = await events(url);
    const ids = Array.from({ length: count }, (_, at) => pid(at + 1));
    const landedAtNight = ids.slice(1);
    expectOnceEach(all, landedAtNight);
    // No packet was claimed twice; the human-gated one was claimed once and held.
    expect(all.filter((event) => event.kind === "claimed" && event.packet === "P01")).toHaveLength(1);
    expect(all.filter((event) => event.kind === "held" && event.packet === "P01")).toHaveLength(1);
    // A packet was claimed only after what it requires had merged.
    const at = (kind: string, id: string): number => all.findIndex((event) => event.kind === kind && event.packet === id);
    for (const [packet, needs] of Object.entries(requires)) for (const need of needs) expect(at("claimed", pid(Number(packet)))).toBeGreaterThan(at("merged", pid(need)));
    // The remote holds every landing once, in one line of history; its tests pass.
    const landed = (): string[] => execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean).sort();
    expect(landed()).toEqual(landedAtNight);
    expect(execFileSync("git", ["rev-list", "--merges", "--count", "main"], { cwd: remote, encoding: "utf8" }).trim()).toBe("0");
    // The work was shared between the machines.
    expect(new Set(all.filter((event) => event.kind === "claimed").map((event) => event.worker)).size).toBeGreaterThan(1);
    const checkout = clones[3] as string;
    const status = runCli(["status", "--json"], checkout, { FACTORY_LEDGER_URL: url });
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { packets: { state: string }[] }).packets.map((packet) => packet.state)).toEqual(["awaiting_human", ...landedAtNight.map(() => "merged")]);
    // A person approves the held packet from the fourth clone, which never ran anything: it lands there once.
    const approved = runCli(["approve", "P01", "--yes"], checkout, { FACTORY_LEDGER_URL: url }, 120_000);
    expect(approved.code, `${approved.stdout}${approved.stderr}`).toBe(0);
    expect(landed()).toEqual(ids);
    expect((await events(url)).filter((event) => event.kind === "merged" && event.packet === "P01")).toHaveLength(1);
    execFileSync("git", ["pull", "--quiet", "--ff-only"], { cwd: checkout });
    execFileSync(process.execPath, ["--test", ...testFilesOf(checkout)], { cwd: checkout, stdio: "pipe" });
  });

  it("one budget for the fleet: two workers stop at one cap across both, each call reserved as it starts; what each spent is in the ledger", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const count = 6;
    const script: Script = {};
    for (let at = 1; at <= count; at++) script[pid(at)] = { implementer: [honest(at, { cost: 0.2 })], reviewer: [{ ...reviewer(at), cost: 0.2 }] };
    const repo = queueRepo(count, script, "", "", {});
    // Each call reserves what it costs: the tiers' estimate.
    repo.write(
      ".factory/config.toml",
      repo
        .read(".factory/config.toml")
        .replace(/model = "(m-\w+)" \}/g, 'model = "$1", estimate_usd = 0.2 }')
        .replace("[limits]\n", "[limits]\nmax_cost_usd = 1\n"),
    );
    repo.commit("tiers with an estimate");
    const workersRun = [startWorker(repo, url, "w1"), startWorker(repo, url, "w2")];
    const ends = await Promise.all(workersRun.map((worker) => worker.done));
    const all = await events(url);
    const spent = all.filter((event) => event.kind === "agent-finished").reduce((sum, event) => sum + Number(event.costUsd ?? 0), 0);
    // Every call started only while spent + reserved was under the cap: together below cap + one call, where
    // each worker's own count would have let the two spend about twice the cap.
    expect(spent, ends.map((end) => end.out).join("\n----\n")).toBeGreaterThan(0);
    expect(spent).toBeLessThan(1.2 + 1e-9);
    expect(all.filter((event) => event.kind === "agent-started")).toHaveLength(all.filter((event) => event.kind === "agent-finished").length);
    const halted = ends.filter((end) => /the cost cap of \$1\.00 for the last 12h is reached across every worker/.test(end.out));
    expect(halted.length, ends.map((end) => end.out).join("\n----\n")).toBeGreaterThan(0);
  });

  it("one project per database: a worker of another project (or of a fork on another remote) is refused before it claims, naming both; the project's own workers go on", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script: Script = { P01: { implementer: [honest(1)], reviewer: [reviewer(1)] } };
    const ours = queueRepo(1, script, '[target]\nremote = "origin"\n');
    const { clones } = withRemote(ours, 2, context.onTestFinished);
    const migrated = runCli(["ledger", "migrate"], clones[0] as string, { FACTORY_LEDGER_URL: url });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/serves this project from now on \(root [0-9a-f]{12}, branch main, remote \/.*-remote\)/);
    // Another project (its own history and remote) pointed at the same database.
    const theirs = queueRepo(1, script, '[target]\nremote = "origin"\n');
    const other = withRemote(theirs, 1, context.onTestFinished).clones[0] as string;
    const refused = startWorker({ ...theirs, dir: other }, url, "stranger");
    const end = await refused.done;
    expect(end.code).toBe(2);
    expect(end.out).toMatch(
      /factory run refused: postgres:\/\/.* serves another project \(bound by factory ledger migrate by .*: root [0-9a-f]{12}, branch main, remote .*-remote\): its history starts at [0-9a-f]{12}, this repository's at [0-9a-f]{12}; its remote is .*-remote, this repository's .*-remote.*Nothing was claimed or spent\./s,
    );
    // A fork of ours (the same history) landing on another remote is another project too.
    const fork = `${ours.dir}-fork.git`;
    execFileSync("git", ["clone", "--quiet", "--bare", clones[1] as string, fork]);
    context.onTestFinished(() => rmSync(fork, { recursive: true, force: true }));
    execFileSync("git", ["remote", "set-url", "origin", fork], { cwd: clones[1] as string });
    const forked = await startWorker({ ...ours, dir: clones[1] as string }, url, "fork").done;
    expect(forked.code).toBe(2);
    expect(forked.out).toMatch(/its remote is .*-remote, this repository's .*-fork/);
    expect(await events(url)).toEqual([]);
    // The project's own worker is quiet about it and lands.
    const own = await startWorker({ ...ours, dir: clones[0] as string }, url, "ours").done;
    expect(own.code, own.out).toBe(0);
    expect(own.out).not.toContain("another project");
    expectOnceEach(await events(url), ["P01"]);
  });

  it("a held packet is approved from another clone: the held attempt is on the remote, the approval lands it there once", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script = honestScript(3);
    const repo = queueRepo(3, script, '[target]\nremote = "origin"\n', 'gate = "human"');
    const { remote, clones } = withRemote(repo, 4, context.onTestFinished);
    const worker = startWorker({ ...repo, dir: clones[0] as string }, url, "night");
    const end = await worker.done;
    expect(end.out).toContain("P01 awaits a person: factory approve P01");
    const heldRef = execFileSync("git", ["for-each-ref", "--format=%(refname) %(objectname)", "refs/factory/held/"], { cwd: remote, encoding: "utf8" }).trim();
    expect(heldRef.split(" ")[0]).toBe("refs/factory/held/P01");

    // The diff and the brief on a clone that never ran anything fetch the held attempt from the remote.
    const diffed = runCli(["diff", "P01"], clones[2] as string, { FACTORY_LEDGER_URL: url });
    expect([diffed.code, diffed.stderr]).toEqual([0, ""]);
    expect(diffed.stdout).toContain("+export function double(n) {");
    // Fetching held attempts is no fetch of the target: status still says this clone never fetched main.
    expect(runCli(["status"], clones[2] as string, { FACTORY_LEDGER_URL: url }).stdout).toContain("This clone's main: never fetched from origin");
    // Gone from the remote too: said, with what to do, exit 1 (never git's "bad object").
    execFileSync("git", ["update-ref", "-d", "refs/factory/held/P01"], { cwd: remote });
    const lacking = runCli(["diff", "P01"], clones[3] as string, { FACTORY_LEDGER_URL: url });
    expect(lacking.code).toBe(1);
    expect(lacking.stderr).toMatch(/P01 is held for a person, but its held commit [0-9a-f]{10} is not in this clone; origin does not hold it either/);
    const briefLacking = runCli(["report"], clones[3] as string, { FACTORY_LEDGER_URL: url });
    expect(briefLacking.code, briefLacking.stderr).toBe(0);
    expect(briefLacking.stdout).toMatch(/the held commit [0-9a-f]{10} is not in this clone/);
    execFileSync("git", ["update-ref", ...(heldRef.split(" ") as [string, string])], { cwd: remote });
    // status says how current its clone's view is: this one never fetched the worker's two landings; the worker's clone has them.
    const stale = runCli(["status"], clones[1] as string, { FACTORY_LEDGER_URL: url });
    expect(stale.stdout).toContain("the ledger records 2 landing(s) this clone does not have: `git pull`");
    const staleJson = JSON.parse(runCli(["status", "--json"], clones[1] as string, { FACTORY_LEDGER_URL: url }).stdout) as { target_view?: { missing_landings: number } };
    expect(staleJson.target_view?.missing_landings).toBe(2);
    const current = runCli(["status"], clones[0] as string, { FACTORY_LEDGER_URL: url });
    expect(current.stdout).toMatch(/This clone's main: last fetched from origin \S.* ago \(/);
    expect(current.stdout).not.toContain("landing(s) this clone does not have");
    const brief = runCli(["report"], clones[1] as string, { FACTORY_LEDGER_URL: url });
    expect(brief.code, brief.stderr).toBe(0);
    expect(brief.stdout).toMatch(/src\/double\.js +\| +3 \+\+\+/);

    // A person on another machine, in a clone that never ran anything; first while an approval elsewhere holds the packet.
    const other = clones[1] as string;
    await sql(url, "INSERT INTO factory_claims (packet, attempt, fence, worker, run, lease_until) VALUES ('P01', 1, nextval('factory_fence'), 'approve@elsewhere:1', 'r', now() + interval '1 hour')");
    const busy = runCli(["approve", "P01", "--yes"], other, { FACTORY_LEDGER_URL: url }, 120_000);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(/factory approve refused: P01 is claimed by worker approve@elsewhere:1 \(fence \d+\); nothing was approved/);
    const rejecting = runCli(["reject", "P01", "--reason", "no", "--yes"], other, { FACTORY_LEDGER_URL: url });
    expect(rejecting.code).toBe(2);
    expect(rejecting.stderr).toContain("P01 is being approved and landed by approve@elsewhere:1 now");
    await sql(url, "DELETE FROM factory_claims WHERE packet = 'P01'");
    const approved = runCli(["approve", "P01", "--yes"], other, { FACTORY_LEDGER_URL: url }, 120_000);
    expect(approved.code, `${approved.stdout}${approved.stderr}`).toBe(0);
    expect(approved.stdout).toMatch(/Approved by .* and merged into main as [0-9a-f]{10}/);
    expect(approved.stderr).not.toContain("was left at"); // no task branch here: an approval from another clone, not a stopped one
    const landed = execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean);
    expect(landed.sort()).toEqual(["P01", "P02", "P03"]);
    const trailers = execFileSync("git", ["log", "--format=%(trailers)", "--grep=Factory-Packet: P01", "main"], { cwd: remote, encoding: "utf8" });
    expect(trailers).toMatch(/Factory-Approved-By: /);
    expect(trailers).toMatch(/Factory-Claim: P01 fence \d+/);
    expect(execFileSync("git", ["for-each-ref", "refs/factory/held/"], { cwd: remote, encoding: "utf8" }).trim()).toBe("");
    const all = await events(url);
    expect(all.filter((event) => event.kind === "merged" && event.packet === "P01")).toHaveLength(1);
    // Approving again is refused: it is merged.
    const again = runCli(["approve", "P01", "--yes"], clones[0] as string, { FACTORY_LEDGER_URL: url });
    expect(again.code).toBe(2);
    expect(`${again.stdout}${again.stderr}`).toMatch(/P01 is merged/);
  });

  it("the mutation check runs once for each landing of the fleet, by the worker that landed it", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script = honestScript(3);
    const repo = queueRepo(3, script, '[target]\nremote = "origin"\n[planning]\nmutants = 2\n', "", {});
    const { clones } = withRemote(repo, 2, context.onTestFinished);
    const ends = await Promise.all(clones.map((dir, at) => startWorker({ ...repo, dir }, url, `m${at + 1}`).done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const all = await events(url);
    expectOnceEach(all, ["P01", "P02", "P03"]);
    for (const end of ends) expect(end.out).not.toContain("config.toml changed on main"); // landings moved main; the config did not change
    const measured = all.filter((event) => event.kind === "mutants-measured").map((event) => event.packet);
    expect(measured.sort()).toEqual(["P01", "P02", "P03"]);
  });

  it("a worker says, once, that a newer config reached the target while it ran, and keeps its own", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script = honestScript(3);
    const repo = queueRepo(3, script, '[target]\nremote = "origin"\n', "", {});
    const { remote, clones } = withRemote(repo, 2, context.onTestFinished);
    const [dir, person] = clones as [string, string];
    // In the worker clone's git directory, which the sandbox shows: P01's implementer holds until it exists.
    const go = join(dir, ".git", "factory-test-go");
    repo.setScript({ ...script, P01: { implementer: [{ ...honest(1), run: `touch began && while [ ! -e '${go}' ]; do sleep 0.05; done && rm began` }], reviewer: [reviewer(1)] } });
    const worker = startWorker({ ...repo, dir }, url, "night");
    await eventually(() => existsSync(join(worktreePath(dir, "P01"), "began")), "P01's implementer to begin");
    // A person pushes a changed config while P01's attempt runs.
    const config = join(person, ".factory", "config.toml");
    writeFileSync(config, `${readFileSync(config, "utf8")}\n# a newer config\n`);
    execFileSync("git", ["commit", "--quiet", "-am", "a newer config"], { cwd: person });
    execFileSync("git", ["push", "--quiet", "origin", "main"], { cwd: person });
    writeFileSync(go, "");
    const end = await worker.done;
    expect(end.code, end.out).toBe(0);
    const said = end.out.split("\n").filter((line) => line.includes(".factory/config.toml changed on main since this run started"));
    expect(said, end.out).toHaveLength(1); // P02's and P03's attempts both start on it: said once
    expect(said[0]).toMatch(/read at [0-9a-f]{10}, now [0-9a-f]{10}\); this run keeps the config it started with: stop it and start it again to use the new one/);
    expectOnceEach(await events(url), ["P01", "P02", "P03"]);
    expect(execFileSync("git", ["log", "--format=%s", "main"], { cwd: remote, encoding: "utf8" })).toContain("a newer config");
  });

  it("a landing racing another push to main on the same tip: the other push wins; the worker fetches, re-gates on the new tip and lands after it", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script = honestScript(2);
    const repo = queueRepo(2, script, '[target]\nremote = "origin"\n', "", {});
    const { remote, clones } = withRemote(repo, 2, context.onTestFinished);
    const [dir, person] = clones as [string, string];
    const start = execFileSync("git", ["rev-parse", "main"], { cwd: remote, encoding: "utf8" }).trim();
    // The remote holds the first push to main until a second has updated main: both carry the tip they were made
    // on, the same one, so the remote's own compare-and-swap then refuses the first. (The fleet has one lander at
    // a time: the other push is a person's, or an approve's.)
    writeFileSync(join(remote, "hooks", "pre-receive"), RACE_HOOK, { mode: 0o755 });
    writeFileSync(join(remote, "hooks", "post-receive"), RACE_DONE_HOOK, { mode: 0o755 });
    const worker = startWorker({ ...repo, dir }, url, "night");
    await eventually(() => existsSync(join(remote, "race-1")), "the worker's push held by the remote");
    writeFileSync(join(person, "NOTES.md"), "a person's note\n");
    execFileSync("git", ["add", "NOTES.md"], { cwd: person });
    execFileSync("git", ["commit", "--quiet", "-m", "a person's note"], { cwd: person });
    execFileSync("git", ["push", "--quiet", "origin", "main"], { cwd: person });
    const end = await worker.done;
    expect(end.code, end.out).toBe(0);
    expect(end.out).toContain("origin/main moved while landing (another worker's push won); fetching and landing again on its new tip");
    expect(end.out).toMatch(/re-gate: main moved to [0-9a-f]{10}; gating the combined tree/);
    expectOnceEach(await events(url), ["P01", "P02"]);
    // One line of history on the remote: the person's commit on the tip both started from, the landings on it.
    const history = execFileSync("git", ["log", "--format=%P %s", "main"], { cwd: remote, encoding: "utf8" }).trim().split("\n");
    expect(history[2]).toBe(`${start} a person's note`);
    expect(execFileSync("git", ["rev-list", "--merges", "--count", "main"], { cwd: remote, encoding: "utf8" }).trim()).toBe("0");
    execFileSync("git", ["pull", "--quiet", "--ff-only"], { cwd: person });
    execFileSync(process.execPath, ["--test", ...testFilesOf(person)], { cwd: person, stdio: "pipe" });
  });

  it("the fleet's landing queue: three workers' candidates wait for one lander, which gates them together once and lands each; meanwhile their workers go on implementing", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(4, honestScript(4), '[target]\nremote = "origin"\n', "", {});
    const { remote, clones } = withRemote(repo, 3, context.onTestFinished);
    const migrated = runCli(["ledger", "migrate"], clones[0] as string, { FACTORY_LEDGER_URL: url });
    expect(migrated.code, migrated.stderr).toBe(0);
    // The lander's lease is held (as a lander busy with a long batch would hold it): every candidate waits in the queue.
    await sql(url, "INSERT INTO factory_lander (worker, run, lease_until) VALUES ('busy', 'busy', now() + interval '1 hour')");
    const runs = clones.map((dir, at) => startWorker({ ...repo, dir }, url, `m${at + 1}`));
    await untilQuery(url, "three candidates waiting to land", "SELECT 1 FROM factory_landings WHERE done_at IS NULL HAVING count(*) >= 3", 120_000);
    // A worker whose candidate waits goes back to implementing: the fourth packet is claimed before anything landed.
    const waiting = await until(url, "the fourth packet claimed while three wait to land", runs[0] as Worker, (all) => all.filter((event) => event.kind === "claimed").length === 4);
    expect(waiting.filter((event) => event.kind === "merged")).toEqual([]);
    // Each candidate's commit is on the remote for the lander, under refs/factory/landing/.
    expect(execFileSync("git", ["for-each-ref", "--format=%(refname)", "refs/factory/landing/"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(3);
    await sql(url, "DELETE FROM factory_lander");
    const ends = await Promise.all(runs.map((worker) => worker.done));
    for (const end of ends) expect(end.code, end.out).toBe(0);
    const all = await events(url);
    expectOnceEach(all, ["P01", "P02", "P03", "P04"]);
    // One gating of the three waiting candidates' combination, green, covers them: none of them is re-gated.
    const batches = all.filter((event) => event.kind === "batch-gated");
    expect(batches[0]).toMatchObject({ verdict: "green" });
    const together = (batches[0]?.packets ?? []) as string[];
    expect(together.length).toBeGreaterThanOrEqual(3);
    const out = ends.map((end) => end.out).join("\n");
    expect(out).not.toMatch(/P0[123]#1 re-gate/);
    // The lander landed other workers' candidates: every candidate of the batch by one worker, each recorded by its own.
    const rows = await query<{ packet: string; worker: string; landed_by: string; kind: string }>(url, "SELECT packet, worker, landed_by, result->>'kind' AS kind FROM factory_landings ORDER BY id");
    const batched = rows.filter((row) => together.includes(row.packet));
    expect(new Set(batched.map((row) => row.landed_by)).size).toBe(1);
    expect(new Set(batched.map((row) => row.worker)).size).toBeGreaterThan(1);
    expect(rows.map((row) => row.kind)).toEqual(rows.map(() => "merged"));
    const claimant = (packet: string, attempt: unknown): unknown => all.find((event) => event.kind === "claimed" && event.packet === packet && event.attempt === attempt)?.worker;
    for (const row of rows) expect(claimant(row.packet, all.find((event) => event.kind === "merged" && event.packet === row.packet)?.attempt)).toBe(row.worker);
    // The remote: one line of history, its tests pass; the candidates' refs are gone.
    expect(execFileSync("git", ["rev-list", "--merges", "--count", "main"], { cwd: remote, encoding: "utf8" }).trim()).toBe("0");
    expect(execFileSync("git", ["for-each-ref", "refs/factory/landing/"], { cwd: remote, encoding: "utf8" }).trim()).toBe("");
  });

  it("the fleet's lander bisects a red batch: the candidates before the culprit land, the culprit is sent back with the combination's failure and no re-gate of its own", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const script = { ...honestScript(3), P03: { implementer: [honest(3), honest(3), honest(3)], reviewer: [reviewer(3), reviewer(3), reviewer(3)] } };
    const repo = queueRepo(3, script, '[target]\nremote = "origin"\n', "", {});
    // P03's planted test also says P01's file is not there: right on the tip, red on any combination with P01.
    repo.write(
      "packets/supplied/P03/test/f3.test.js",
      `${DOUBLE_TEST_FOR("f3", 2, 6)}\nimport { existsSync } from "node:fs";\ntest("f3 stands alone", () => {\n  assert.equal(existsSync(new URL("../src/double.js", import.meta.url)), false);\n});\n`,
    );
    repo.commit("P03 stands alone");
    const { remote, clones } = withRemote(repo, 1, context.onTestFinished);
    expect(runCli(["ledger", "migrate"], clones[0] as string, { FACTORY_LEDGER_URL: url }).code).toBe(0);
    await sql(url, "INSERT INTO factory_lander (worker, run, lease_until) VALUES ('busy', 'busy', now() + interval '1 hour')");
    const worker = startWorker({ ...repo, dir: clones[0] as string }, url, "solo");
    // One worker: its three candidates queue in its order (each parked, it goes on to the next).
    await untilQuery(url, "three candidates waiting to land", "SELECT 1 FROM factory_landings WHERE done_at IS NULL HAVING count(*) = 3", 120_000);
    await sql(url, "DELETE FROM factory_lander");
    const end = await worker.done;
    expect(end.out).toContain("the merge batch is red from P03 on: P01, P02 without it are green");
    const all = await events(url);
    const batches = all.filter((event) => event.kind === "batch-gated").map((event) => `${(event.packets as string[]).join("+")} ${event.verdict}`);
    expect(batches.slice(0, 3)).toEqual(["P01+P02+P03 red", "P01 green", "P01+P02 green"]);
    for (const id of ["P01", "P02"]) expect(all.filter((event) => event.kind === "merged" && event.packet === id)).toHaveLength(1);
    expect(all.filter((event) => event.kind === "merged" && event.packet === "P03")).toEqual([]);
    const rows = await query<{ packet: string; attempt: number; kind: string }>(url, "SELECT packet, attempt, result->>'kind' AS kind FROM factory_landings WHERE packet = 'P03' ORDER BY id");
    expect(rows[0]).toEqual({ packet: "P03", attempt: 1, kind: "regate-failed" });
    expect(end.out).not.toMatch(/P03#1 re-gate/);
    expect(execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean).sort()).toEqual(["P01", "P02"]);
  });

  it("one worker on the fleet's landing queue lands each candidate at once: its next attempt starts from that landing, so nothing is re-gated", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(3, honestScript(3), '[target]\nremote = "origin"\n', "", {});
    const { clones } = withRemote(repo, 1, context.onTestFinished);
    const end = await startWorker({ ...repo, dir: clones[0] as string }, url, "solo").done;
    expect(end.code, end.out).toBe(0);
    expectOnceEach(await events(url), ["P01", "P02", "P03"]);
    expect(end.out).not.toContain("re-gate");
    expect(end.out).not.toContain("a merge batch");
    const rows = await query<{ packet: string; landed_by: string; kind: string }>(url, "SELECT packet, landed_by, result->>'kind' AS kind FROM factory_landings ORDER BY id");
    expect(rows).toEqual(["P01", "P02", "P03"].map((packet) => ({ packet, landed_by: "solo", kind: "merged" })));
  });

  it("the fleet's lander never lands a candidate whose worker no longer holds its claim: its result is the lost claim, and the packet lands once, by the worker that took it over", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(2, { ...honestScript(2), P01: { implementer: [honest(1), honest(1)], reviewer: [reviewer(1), reviewer(1)] } }, '[target]\nremote = "origin"\n', "", {});
    const { remote, clones } = withRemote(repo, 2, context.onTestFinished);
    expect(runCli(["ledger", "migrate"], clones[0] as string, { FACTORY_LEDGER_URL: url }).code).toBe(0);
    await sql(url, "INSERT INTO factory_lander (worker, run, lease_until) VALUES ('busy', 'busy', now() + interval '1 hour')");
    const stalled = startWorker({ ...repo, dir: clones[0] as string }, url, "stalled");
    await untilQuery(url, "P01's candidate waiting to land", "SELECT 1 FROM factory_landings WHERE packet = 'P01' AND done_at IS NULL");
    // Its worker stops (a frozen machine) while the candidate waits; its claim runs out, and another worker starts.
    const frozen = [stalled.child.pid ?? 0, ...descendants(stalled.child.pid ?? 0)];
    for (const pid of frozen) tryKill(pid, "SIGSTOP");
    await sql(url, "DELETE FROM factory_lander");
    const heir = startWorker({ ...repo, dir: clones[1] as string }, url, "heir");
    const end = await heir.done;
    for (const pid of frozen) tryKill(pid, "SIGCONT");
    expect(end.code, end.out).toBe(0);
    const stalledEnd = await stalled.done;
    const all = await events(url);
    // P01's first candidate was never landed by the heir: its row's result is the lost claim; the heir's own attempt landed it.
    const rows = await query<{ packet: string; attempt: number; worker: string; kind: string }>(
      url,
      "SELECT packet, attempt, worker, result->>'kind' AS kind FROM factory_landings WHERE packet = 'P01' ORDER BY id",
    );
    expect(rows[0]).toMatchObject({ attempt: 1, worker: "stalled", kind: "claim-lost" });
    expect(all.filter((event) => event.kind === "merged" && event.packet === "P01")).toEqual([expect.objectContaining({ attempt: 2 })]);
    expect(all.find((event) => event.kind === "claimed" && event.packet === "P01" && event.attempt === 2)).toMatchObject({ worker: "heir" });
    expect(
      execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" })
        .split("\n")
        .filter((line) => line === "P01"),
    ).toHaveLength(1);
    expect(stalledEnd.out).toMatch(/P01: this worker's claim is lost/);
  });

  it("a worker killed between its push and its ledger write: the next run records merged from the remote's trailers, once; nothing lands twice", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(1, { P01: { implementer: [honest(1)], reviewer: [reviewer(1)] } }, '[target]\nremote = "origin"\n');
    const { remote, clones } = withRemote(repo, 2, context.onTestFinished);
    // Once main has moved on the remote, and before git push has returned to the worker, the worker dies.
    writeFileSync(join(remote, "hooks", "post-receive"), KILL_ON_MAIN_HOOK, { mode: 0o755 });
    const doomed = startWorker({ ...repo, dir: clones[0] as string }, url, "doomed");
    writeFileSync(join(remote, "worker.pid"), String(doomed.child.pid));
    const end = await doomed.done;
    expect(end.signal, end.out).toBe("SIGKILL");
    const landed = (): string[] => execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean);
    expect(landed()).toEqual(["P01"]);
    expect((await events(url)).filter((event) => event.kind === "merged")).toEqual([]);
    rmSync(join(remote, "hooks", "post-receive"));
    // The next run, on another machine: the remote's trailer is the record; P01 is not attempted or landed again.
    const next = await startWorker({ ...repo, dir: clones[1] as string }, url, "next").done;
    expect(next.code, next.out).toBe(0);
    const all = await events(url);
    expect(all.filter((event) => event.kind === "merged" && event.packet === "P01")).toHaveLength(1);
    expect(all.filter((event) => event.kind === "claimed" && event.packet === "P01").map((event) => event.worker)).toEqual(["doomed"]);
    expect(all.filter((event) => event.kind === "agent-finished" && event.packet === "P01" && event.role === "implementer")).toHaveLength(1);
    expect(landed()).toEqual(["P01"]);
    const status = JSON.parse(runCli(["status", "--json"], clones[1] as string, { FACTORY_LEDGER_URL: url }).stdout) as { packets: { id: string; state: string }[] };
    expect(status.packets[0]).toMatchObject({ id: "P01", state: "merged" });
  });

  it("a worker killed between its push and its ledger write while another worker runs: the other, taking the packet over, records merged from the trailer and calls no agent", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(1, { P01: { implementer: [honest(1), honest(1)], reviewer: [reviewer(1), reviewer(1)] } }, '[target]\nremote = "origin"\n');
    const { remote, clones } = withRemote(repo, 2, context.onTestFinished);
    // The push waits until the heir is running (past its start-up reconcile, which finds no trailer); once main
    // has moved, and before git push has returned to the worker, the worker dies.
    writeFileSync(join(remote, "hooks", "pre-receive"), "#!/bin/sh\ngrep -q ' refs/heads/main$' || exit 0\nwhile [ ! -e go ]; do sleep 0.05; done\n", { mode: 0o755 });
    writeFileSync(join(remote, "hooks", "post-receive"), KILL_ON_MAIN_HOOK, { mode: 0o755 });
    const doomed = startWorker({ ...repo, dir: clones[0] as string }, url, "doomed");
    writeFileSync(join(remote, "worker.pid"), String(doomed.child.pid));
    await until(url, "P01 claimed by the doomed worker", doomed, (all) => all.some((event) => event.kind === "claimed" && event.worker === "doomed"));
    const heir = startWorker({ ...repo, dir: clones[1] as string }, url, "heir");
    await until(url, "the heir's run started", heir, (all) => all.filter((event) => event.kind === "run-started").length === 2);
    writeFileSync(join(remote, "go"), "");
    expect((await doomed.done).signal).toBe("SIGKILL");
    rmSync(join(remote, "hooks", "post-receive"));
    const end = await heir.done;
    expect(end.code, end.out).toBe(0);
    expect(end.out).toMatch(/already landed on main as [0-9a-f]{12} \(its Factory-Packet trailer\), by a run that stopped before recording it: recorded as merged, no agent called/);
    const all = await events(url);
    expect(all.filter((event) => event.kind === "claimed" && event.packet === "P01").map((event) => event.worker)).toEqual(["doomed", "heir"]);
    expect(all.filter((event) => event.kind === "merged" && event.packet === "P01")).toHaveLength(1);
    expect(all.filter((event) => event.kind === "agent-finished" && event.role === "implementer")).toHaveLength(1);
    expect(execFileSync("git", ["log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main"], { cwd: remote, encoding: "utf8" }).split("\n").filter(Boolean)).toEqual(["P01"]);
  });

  it("a push the remote refuses for its own reason (a hook) is the environment's: named with the remote's words, no attempt spent, nothing recorded as merged", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = queueRepo(1, { P01: { implementer: [honest(1)], reviewer: [reviewer(1)] } }, '[target]\nremote = "origin"\n');
    const { remote, clones } = withRemote(repo, 1, context.onTestFinished);
    writeFileSync(join(remote, "hooks", "pre-receive"), "#!/bin/sh\ngrep -q ' refs/heads/main$' || exit 0\necho 'main is protected: changes go through review' >&2\nexit 1\n", { mode: 0o755 });
    const worker = startWorker({ ...repo, dir: clones[0] as string }, url, "solo");
    const end = await worker.done;
    expect(end.code, end.out).toBe(1); // two environment errors in a row halt the run
    expect(end.out).toContain("origin refused the push to main: remote: main is protected: changes go through review");
    const all = await events(url);
    expect(all.filter((event) => event.kind === "merged")).toEqual([]);
    expect(all.filter((event) => event.kind === "decided").map((event) => event.refund)).toEqual([true, true]);
    const status = JSON.parse(runCli(["status", "--json"], clones[0] as string, { FACTORY_LEDGER_URL: url }).stdout) as { packets: { id: string; state: string; attempts_used: number }[] };
    expect(status.packets[0]).toMatchObject({ id: "P01", state: "queued", attempts_used: 0 });
    expect(execFileSync("git", ["log", "--format=%s", "main"], { cwd: remote, encoding: "utf8" })).not.toContain("double");
  });
});

/** A bare remote cloned from `repo`, and `count` clones of it (each a worker's machine), removed when the test finishes. */
function withRemote(repo: LoopRepo, count: number, onFinished: (hook: () => void) => void): { remote: string; clones: string[] } {
  const remote = `${repo.dir}-remote.git`;
  execFileSync("git", ["clone", "--quiet", "--bare", repo.dir, remote]);
  const clones = Array.from({ length: count }, (_, at) => {
    const dir = `${repo.dir}-c${at + 1}`;
    return cloneAsWorker(remote, dir);
  });
  onFinished(() => {
    for (const dir of [remote, ...clones]) {
      rmSync(worktreesDir(dir), { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return { remote, clones };
}

/** post-receive: once main has moved (a candidate's ref pushed for the fleet's lander is not a landing), the worker dies before git push returns to it. */
const KILL_ON_MAIN_HOOK = `#!/bin/sh
grep -q ' refs/heads/main$' || exit 0
while [ ! -s worker.pid ]; do sleep 0.05; done
kill -9 "$(cat worker.pid)"
`;

/**
 * pre-receive: the first push to main waits (bounded) until another push to main has updated it (the
 * post-receive below says so); any later push passes at once. The first push then finds main moved.
 */
const RACE_HOOK = `#!/bin/sh
grep -q ' refs/heads/main$' || exit 0
if mkdir race-1 2>/dev/null; then
  waited=0
  while [ ! -e race-done ] && [ "$waited" -lt 1200 ]; do sleep 0.1; waited=$((waited + 1)); done
fi
exit 0
`;

/** post-receive: main was updated by a push. */
const RACE_DONE_HOOK = `#!/bin/sh
grep -q ' refs/heads/main$' && touch race-done
exit 0
`;
