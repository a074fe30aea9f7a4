#!/usr/bin/env node
// Crash safety, measured from outside: `factory run --concurrency 2` on a
// five-packet pytest queue is killed with SIGKILL at random moments (the
// factory's process alone, as a crash or an OOM kill does it: its git,
// agent and gate children live on), restarted, and killed again, until the
// queue drains in a run that is not killed; then the next round starts on a
// fresh repository, until KILLS kills have been made. After each round:
//   - every packet landed exactly once (one commit per packet on main, the
//     ledger says merged), and main's tests pass on a clean export of it;
//   - the user's uncommitted edit and untracked file are byte-identical;
//   - nothing is left behind: no worktree, branch or ref of the factory's,
//     no git lock file, no sandbox directory in the temporary directory,
//     no scratch worktree, and no process started for the repository.
// Exit 1 when any check fails.  node bench/kills.mjs [kills=50] [seed=1]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, makeRepo } from "./lib.mjs";

const KILLS = Number(process.argv[2] ?? 50);
let seed = Number(process.argv[3] ?? 1);
/** A small seeded generator (mulberry32), so a failing series can be replayed. */
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const PACKETS = 5;
const sandboxed = existsSync("/usr/bin/bwrap") || existsSync("/bin/bwrap");
const failures = [];
/** Where each kill found the run: the step of the last line it printed. */
const killedAt = new Map();
let kills = 0;
let round = 0;

// How long a run takes unkilled: kills are spread over all of it; a restarted run that finishes before its kill ends the round.
let fullRunMs = await calibrate();
console.log(`an unkilled run of ${PACKETS} packets takes ${(fullRunMs / 1000).toFixed(1)} s; kills come at random within that time of a start`);

while (kills < KILLS) {
  round += 1;
  const home = mkdtempSync(join(tmpdir(), "factory-bench-kills-"));
  const env = { ...process.env, NO_COLOR: "1", TMPDIR: join(home, "tmp"), XDG_CACHE_HOME: join(home, "cache") };
  mkdirSync(env.TMPDIR);
  const dir = makeRepo({ gate: "pytest", packets: PACKETS, sleep: 0.4, sandbox: sandboxed, parent: home });
  const user = { "tests/test_base.py": `${readFileSync(join(dir, "tests/test_base.py"), "utf8")}# my edit, not committed\n`, "notes.txt": "my own notes\n" };
  for (const [path, text] of Object.entries(user)) writeFileSync(join(dir, path), text);
  let roundKills = 0;
  try {
    for (let first = true; ; first = false) {
      // A round's first run is always killed; a later one may finish first, which ends the round.
      const killAt = kills < KILLS ? 100 + random() * fullRunMs * (first ? 0.9 : 1) : undefined;
      const start = Date.now();
      const result = await runOnce(dir, env, killAt);
      if (first && !result.killed) fullRunMs = Math.min(fullRunMs, Date.now() - start); // a whole run was faster than measured
      if (result.killed) {
        kills += 1;
        killedAt.set(result.step, (killedAt.get(result.step) ?? 0) + 1);
        roundKills += 1;
        continue;
      }
      if (result.code !== 0) fail(`round ${round}: an unkilled run exited ${result.code}: ${result.tail}`);
      break;
    }
    check(dir, home, env, user);
    console.log(`round ${round}: ${roundKills} kill(s), then a run to the end; ${kills}/${KILLS} kills so far`);
  } finally {
    await settle(home);
    rmSync(home, { recursive: true, force: true });
  }
  if (failures.length > 0) break;
}

console.log(
  failures.length === 0
    ? `${kills} kills of \`factory run --concurrency 2\` in ${round} round(s) of ${PACKETS} packets (sandbox: ${sandboxed ? "bubblewrap" : "none"}): every packet landed exactly once, main green, the user's files identical, nothing left behind`
    : `FAILED after ${kills} kills in ${round} round(s):\n${failures.map((line) => `  - ${line}`).join("\n")}`,
);
console.log(
  `where the kills came: ${[...killedAt]
    .sort((a, b) => b[1] - a[1])
    .map(([step, count]) => `${step} ${count}`)
    .join(", ")}`,
);
process.exitCode = failures.length === 0 ? 0 : 1;

async function calibrate() {
  const home = mkdtempSync(join(tmpdir(), "factory-bench-kills-"));
  const env = { ...process.env, NO_COLOR: "1", TMPDIR: join(home, "tmp"), XDG_CACHE_HOME: join(home, "cache") };
  mkdirSync(env.TMPDIR);
  try {
    const dir = makeRepo({ gate: "pytest", packets: PACKETS, sleep: 0.4, sandbox: sandboxed, parent: home });
    const start = Date.now();
    const result = await runOnce(dir, env, undefined);
    if (result.code !== 0) throw new Error(`the calibration run failed (exit ${result.code}):\n${result.tail}`);
    return Date.now() - start;
  } finally {
    await settle(home);
    rmSync(home, { recursive: true, force: true });
  }
}

/** Pure: the step a run's last progress line names ("P01#1 gates" → "gates"; "P00#1   gate tests: pass" → "gate"). */
function stepOf(output) {
  const last = output.trimEnd().split("\n").at(-1) ?? "";
  const step = /^P\d\d#\d+\s+(→ \w+|[a-z-]+)/.exec(last)?.[1];
  return step ?? (last === "" ? "start-up" : "preflight");
}

function fail(message) {
  failures.push(message);
}

/** One `factory run`, killed with SIGKILL after `killAt` ms unless it ends first. */
function runOnce(cwd, env, killAt) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "run", "--concurrency", "2"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    let killed = false;
    const kill = () => {
      killed = true;
      child.kill("SIGKILL");
    };
    const timer = killAt === undefined ? undefined : setTimeout(kill, killAt);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ killed: killed && code === null, code, step: stepOf(output), tail: output.split("\n").slice(-6).join("\n") });
    });
  });
}

function git(cwd, ...args) {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function check(dir, home, env, user) {
  const subjects = git(dir, "log", "--format=%s", "main").split("\n");
  for (let i = 0; i < PACKETS; i++) {
    const id = `P${String(i).padStart(2, "0")}`;
    const landed = subjects.filter((subject) => subject.includes(`[${id}]`)).length;
    if (landed !== 1) fail(`round ${round}: ${id} landed ${landed} time(s)`);
  }
  const status = JSON.parse(execFileSync(process.execPath, [BIN, "status", "--json"], { cwd: dir, env, encoding: "utf8" }));
  for (const packet of status.packets) if (packet.state !== "merged") fail(`round ${round}: ${packet.id} is ${packet.state} in the ledger`);

  // main's tests, on a clean export of main (the user's edit is not main's).
  const exported = join(home, "main-export");
  mkdirSync(exported);
  execFileSync("sh", ["-c", `git archive main | tar -x -C '${exported}'`], { cwd: dir });
  try {
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], { cwd: exported, stdio: "pipe" });
  } catch (error) {
    fail(`round ${round}: main's tests fail: ${error.stdout?.toString().split("\n").slice(-3).join(" ")}`);
  }

  for (const [path, text] of Object.entries(user)) if (readFileSync(join(dir, path), "utf8") !== text) fail(`round ${round}: the user's ${path} changed`);
  const changes = git(dir, "status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean).sort();
  if (JSON.stringify(changes) !== JSON.stringify([" M tests/test_base.py", "?? notes.txt"])) fail(`round ${round}: the checkout shows ${JSON.stringify(changes)}`);

  const left = [
    ...git(dir, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((line) => line.startsWith("worktree ") && line !== `worktree ${dir}`),
    ...git(dir, "for-each-ref", "--format=%(refname)", "refs/heads/factory/", "refs/factory/").split("\n").filter(Boolean),
    ...findLocks(join(dir, ".git")),
    ...readdirSync(env.TMPDIR).filter((name) => name.startsWith("factory-sandbox-")),
    ...listDeep(join(env.XDG_CACHE_HOME, "factory", "worktrees")),
  ];
  for (const item of left) fail(`round ${round}: left behind: ${item}`);
}

function findLocks(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((name) => String(name).endsWith(".lock"))
    .map((name) => join(dir, String(name)));
}

/** Entries under the repository's worktree directory (each repository has one directory there). */
function listDeep(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((repo) => readdirSync(join(dir, repo)).map((name) => join(dir, repo, name)));
}

/** Waits for processes working in this round's directories (orphans of a kill) to end, naming any still alive after 20 s. */
async function settle(home) {
  for (let waited = 0; ; waited += 500) {
    const alive = processesUnder(home);
    if (alive.length === 0) return;
    if (waited >= 20_000) {
      fail(`round ${round}: processes left running: ${alive.map((found) => `${found.pid} ${found.args}`).join("; ")}`);
      for (const found of alive) {
        try {
          process.kill(found.pid, "SIGKILL");
        } catch {}
      }
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Processes whose working directory or command line is under `dir`. */
function processesUnder(dir) {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .flatMap((name) => {
      try {
        const cwd = readlinkSync(`/proc/${name}/cwd`);
        const args = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        return cwd.startsWith(dir) || args.includes(dir) ? [{ pid: Number(name), args }] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}
