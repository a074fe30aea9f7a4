#!/usr/bin/env node
// Measures how `factory lint`, `plan` and `status` scale with the size of the
// queue: a throwaway repository with N packets in dependency chains, timed
// end to end through the built CLI, with wall time and the peak memory of
// the factory process; with --events E, each queue also gets a ledger of E
// events (a packet's life: registered, claimed, calls, gates, decided),
// written through the factory's own append so the hash chain holds.
// With --pg, the ledger is then moved into a PostgreSQL of its own (`factory
// dev-postgres start`, Debian's postgresql package; `ledger export` and
// `ledger import`) and the commands are timed reading it there.
// Usage: node bench/queue.mjs [--events E] [--pg] [N ...]
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../bin/factory.js", import.meta.url));
const args = process.argv.slice(2);
const eventsAt = args.indexOf("--events");
const eventCount = eventsAt >= 0 ? Number(args.splice(eventsAt, 2)[1]) : 0;
const pgAt = args.indexOf("--pg");
const onPostgres = pgAt >= 0 && args.splice(pgAt, 1).length === 1;
const sizes = args.map(Number).filter((n) => n > 0);
const { appendEvents } = await import(new URL("../dist/ledger/store.js", import.meta.url).href);
// Printed by the factory process itself as it exits: its peak resident memory.
const PEAK = `--import=data:text/javascript,process.on("exit",()=>process.stderr.write("\\npeak-rss-kb "+process.resourceUsage().maxRSS+"\\n"))`;

/** E events spread over the packets, each packet's life in order. */
function ledgerEvents(ids, count) {
  const owner = { run: "bench", pid: 1, host: "bench" };
  const life = (packet, attempt) => [
    { kind: "packet-registered", packet, sha256: "0".repeat(64), file: `packets/${packet}-task.toml` },
    { kind: "claimed", packet, attempt, sha256: "0".repeat(64), ...owner },
    { kind: "agent-finished", packet, attempt, role: "implementer", outcome: "ok", costUsd: 0.02, durationMs: 1000 },
    { kind: "gate-finished", packet, attempt, gate: "test", result: "fail", durationMs: 500, detail: "1 regression(s) of 40" },
    { kind: "decided", packet, attempt, decision: "retry", reasons: ["gate test failed"], feedback: ["fix the test"] },
  ];
  const events = [];
  for (let round = 1; events.length < count; round++)
    for (const id of ids) {
      if (events.length >= count) break;
      events.push(...life(id, round).slice(0, count - events.length));
    }
  return events;
}

// This machine's environment sets NODE_EXTRA_CA_CERTS, which every node process reads and parses at
// start (~40 ms here, before any of the factory's code runs); lint, plan and status make no TLS
// connection, so they are timed without it (a user whose environment sets it pays that start too).
const env = { ...process.env, NO_COLOR: "1" };
if (env.NODE_EXTRA_CA_CERTS !== undefined) {
  delete env.NODE_EXTRA_CA_CERTS;
  console.log("(NODE_EXTRA_CA_CERTS is set here: the factory is timed without it)");
}
/** Runs of each kept view ("again"): their median is printed. */
const AGAIN_RUNS = 5;

for (const size of sizes.length ? sizes : [10, 100, 500]) {
  const dir = mkdtempSync(join(tmpdir(), "factory-bench-"));
  try {
    const git = (...args) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
    git("init", "-q", "-b", "main");
    git("config", "user.name", "bench");
    git("config", "user.email", "bench@factory.invalid");
    mkdirSync(join(dir, ".factory"));
    mkdirSync(join(dir, "packets"));
    writeFileSync(join(dir, "SPEC.md"), "# spec\n");
    writeFileSync(join(dir, ".factory/config.toml"), `[agents.a]\nkind = "command"\nrun = "true"\n[tiers]\nstandard = { agent = "a", model = "m" }\n`);
    git("add", "-A");
    git("commit", "-qm", "spec");
    const spec = execFileSync("git", ["rev-parse", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();
    for (let i = 0; i < size; i++) {
      const id = `P${String(i).padStart(4, "0")}`;
      const requires = i % 10 === 0 ? "[]" : `["P${String(i - 1).padStart(4, "0")}"]`;
      writeFileSync(
        join(dir, "packets", `${id}-task.toml`),
        `id = "${id}"\ngoal = "task ${i}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nrequires = ${requires}\nbrief = "do task ${i}"\n[[invariants]]\nid = "i"\nassert = "holds"\n`,
      );
    }
    git("add", "-A");
    git("commit", "-qm", "queue");
    if (eventCount > 0) {
      const ids = Array.from({ length: size }, (_, i) => `P${String(i).padStart(4, "0")}`);
      const events = ledgerEvents(ids, eventCount);
      for (let at = 0; at < events.length; at += 50_000) await appendEvents(dir, events.slice(at, at + 50_000));
    }
    const timedEnv = onPostgres ? { ...env, FACTORY_LEDGER_URL: moveToPostgres(dir) } : env;
    // What was just written reaches the disk before the clock starts, not while the factory runs.
    execFileSync("sync");
    const row = [`${size} packets, ${eventCount} events${onPostgres ? ", PostgreSQL ledger" : ""}:`];
    // plan twice: the first folds the whole ledger (and leaves its snapshot)
    // and keeps what it printed, the second prints the kept plan. status
    // twice: the first builds the board (from the snapshot) and keeps it, the
    // second prints the kept one; then the table a person reads (no --json),
    // built from the kept board, then kept itself.
    const runs = [["lint", "--json"], ["plan", "--json"], ["plan", "--json"], ["status", "--json"], ["status", "--json"], ["status"], ["status"]];
    const labels = ["lint", "plan", "plan again", "status", "status again", "status (table)", "table again"];
    for (const [at, args] of runs.entries()) {
      const times = [];
      let peak = 0;
      for (let again = 0; again < (labels[at].endsWith("again") ? AGAIN_RUNS : 1); again++) {
        const start = process.hrtime.bigint();
        // stdout goes to a file, as `status > board.json` would: a node parent collecting 4.6 MB
        // from a pipe competes with the factory for the two cores and adds its own time.
        const out = openSync(join(dir, ".git", "bench-stdout"), "w");
        const result = spawnSync(process.execPath, [PEAK, bin, ...args], { cwd: dir, encoding: "utf8", stdio: ["ignore", out, "pipe"], maxBuffer: 1024 ** 3, env: timedEnv });
        closeSync(out);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (result.status !== 0 && args[0] !== "lint") throw new Error(`${args[0]} exited ${result.status}: ${result.stderr}`);
        peak = Math.max(peak, Number(/peak-rss-kb (\d+)/.exec(result.stderr)?.[1] ?? 0) / 1024);
      }
      const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
      row.push(`${labels[at]} ${ms.toFixed(0)} ms${times.length > 1 ? ` (median of ${times.length})` : ""} ${peak.toFixed(0)} MB`);
    }
    console.log(row.join("  "));
  } finally {
    if (onPostgres) spawnSync(process.execPath, [bin, "dev-postgres", "stop", "--dir", clusterDir(dir)], { cwd: dir, env, stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where the repository's PostgreSQL runs: beside it in the temporary directory (the server's user must reach it, and cannot enter the repository's). */
function clusterDir(dir) {
  return `${dir}-postgres`;
}

/** The repository's file ledger moved into a PostgreSQL of its own: its URL. */
function moveToPostgres(dir) {
  const cluster = clusterDir(dir);
  const factory = (args, extra = {}) => execFileSync(process.execPath, [bin, ...args], { cwd: dir, env: { ...env, ...extra }, stdio: "pipe" });
  factory(["ledger", "export", join(dir, ".git", "bench-ledger.jsonl")]);
  factory(["dev-postgres", "start", "--dir", cluster]);
  const url = readFileSync(join(cluster, "url"), "utf8").trim();
  factory(["ledger", "import", join(dir, ".git", "bench-ledger.jsonl")], { FACTORY_LEDGER_URL: url });
  return url;
}
