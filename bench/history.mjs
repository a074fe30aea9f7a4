#!/usr/bin/env node
// Measures what a long history costs a landing. A throwaway repository gets N
// commits of history (every 100th a landed packet with its Factory-Packet
// trailers), `factory status` reads it once (and keeps what it read), a
// person adds a commit, and `factory run` lands one packet. Every git command
// is traced (GIT_TRACE): the script prints each lookup of landed versions the
// run made and whether it read the whole history or only what was new, and
// the time of a whole-history lookup beside an incremental one.
// Usage: node bench/history.mjs [N]   (default 100000)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, makeRepo, removeRepo, time } from "./lib.mjs";

const commits = Number(process.argv[2] ?? 100_000);
const { landedPackets, landedCacheFile } = await import(new URL("../dist/git/trailers.js", import.meta.url).href);
const dir = makeRepo({ gate: "true", packets: 1 });
const git = (...args) => execFileSync("git", args, { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 });
try {
  // N empty commits on top of main through fast-import (seconds, not minutes).
  const parent = git("rev-parse", "main").trim();
  const lines = [];
  for (let i = 1; i <= commits; i++) {
    const message = i % 100 === 0 ? `H${i}: old work\n\nFactory-Packet: H${i}\nFactory-Packet-Sha256: ${String(i).padStart(64, "0")}\n` : `commit ${i}\n`;
    lines.push(`commit refs/heads/main`, `committer bench <bench@factory.invalid> ${1_600_000_000 + i} +0000`, `data ${Buffer.byteLength(message)}`, message);
    if (i === 1) lines.push(`from ${parent}`);
    lines.push("");
  }
  const built = time(() => execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, input: lines.join("\n") }));
  git("reset", "--quiet", "--hard", "main");
  console.log(`history: ${commits} commits made in ${built.toFixed(1)} s`);

  mkdirSync(join(dir, ".factory", "state"), { recursive: true }); // a repository the factory has run in keeps state
  const whole = time(() => spawnSync("git", ["log", "--grep=^Factory-Packet:", "--format=%H", "main"], { cwd: dir }));
  const status = time(() => execFileSync("node", [BIN, "status"], { cwd: dir, stdio: "pipe" }));
  console.log(`git log --grep over the whole history: ${(whole * 1000).toFixed(0)} ms; factory status (reads it once and keeps it): ${status.toFixed(2)} s`);

  writeFileSync(join(dir, "NOTES.md"), "a person's commit\n");
  git("add", "NOTES.md");
  git("commit", "-qm", "a person's commit");
  const trace = `${dir}-git-trace.log`; // outside the checkout: the tripwire watches everything in it
  const run = time(() => execFileSync("node", [BIN, "run"], { cwd: dir, stdio: "pipe", env: { ...process.env, GIT_TRACE: trace } }));
  const lookups = readFileSync(trace, "utf8")
    .split("\n")
    .filter((line) => line.includes("trace: built-in: git log") && line.includes("Factory-Packet:"));
  const partial = lookups.filter((line) => / '\^[0-9a-f]{40}'/.test(line) || / \^[0-9a-f]{40}/.test(line));
  console.log(
    `factory run: ${run.toFixed(2)} s, ${git("log", "-n", "20", "--format=%s", "main").includes("[P00]") ? "P00" : "nothing"} merged; lookups of landed versions: ${lookups.length}, of which ${lookups.length - partial.length} read the whole history`,
  );

  // The lookup itself, as the factory makes it: whole history, then from the covered tip.
  const cacheFile = landedCacheFile(dir);
  rmSync(cacheFile, { force: true });
  const [cold, coldMs] = await timed(() => landedPackets(dir, "main", { cacheFile }));
  git("commit", "-q", "--allow-empty", "-m", "another commit");
  const [warm, warmMs] = await timed(() => landedPackets(dir, "main", { cacheFile }));
  console.log(`landedPackets: whole history ${coldMs.toFixed(0)} ms (${cold.length} landed), one commit later ${warmMs.toFixed(0)} ms (${warm.length} landed)`);
} finally {
  removeRepo(dir);
  rmSync(`${dir}-git-trace.log`, { force: true });
}

async function timed(action) {
  const start = process.hrtime.bigint();
  const value = await action();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}
