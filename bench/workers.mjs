#!/usr/bin/env node
// Several workers on one PostgreSQL ledger, against the file ledger.
//  1. Claims per second: CLAIMS packets claimed through the factory's own claim path
//     (claimPacket: a transaction that reads the fold and appends), by one claimer and by
//     three at once (separate connections), on PostgreSQL (leased, fenced) and on the file.
//  2. Landings per minute: the same queue of independent packets whose agent calls sleep
//     SLEEP seconds (so the machine's two cores are not the limit), drained by one and by
//     three `factory run --worker` processes on PostgreSQL, and by one `factory run` with
//     --concurrency 1 and 3 on the file ledger.
//   node bench/workers.mjs [packets=12] [sleep=2] [claims=200]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, benchCluster, makeRepo, mergedCount, removeRepo } from "./lib.mjs";

const dist = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);
const { pgLedger } = await dist("ledger/pg-ledger.js");
const { fileLedger } = await dist("ledger/file-ledger.js");
const { startWorkerClaims } = await dist("ledger/pg-claims.js");
const { claimPacket } = await dist("loop/claim.js");

const packets = Number(process.argv[2] ?? 12);
const sleep = Number(process.argv[3] ?? 2);
const claims = Number(process.argv[4] ?? 200);

const { cluster, database: newDatabase } = await benchCluster();

try {
  console.log(`claims per second (${claims} packets, each claimed once):`);
  for (const claimers of [1, 3]) {
    const url = await newDatabase();
    const root = mkdtempSync(join(tmpdir(), "factory-bench-claims-"));
    const ledgers = Array.from({ length: claimers }, () => pgLedger(url));
    const workers = await Promise.all(ledgers.map((ledger, at) => startWorkerClaims(ledger, { worker: `w${at}`, owner: { run: `r${at}`, pid: at, host: "bench" }, leaseMs: 120_000 })));
    const perSecond = await timeClaims(root, ledgers, workers);
    for (const worker of workers) await worker.stop();
    for (const ledger of ledgers) await ledger.close();
    rmSync(root, { recursive: true, force: true });
    console.log(`  PostgreSQL, ${claimers} claimer(s): ${perSecond.toFixed(0)} claims/s`);
  }
  for (const claimers of [1, 3]) {
    const root = mkdtempSync(join(tmpdir(), "factory-bench-claims-"));
    const ledgers = Array.from({ length: claimers }, () => fileLedger(root));
    const perSecond = await timeClaims(root, ledgers, []);
    rmSync(root, { recursive: true, force: true });
    console.log(`  file,       ${claimers} claimer(s): ${perSecond.toFixed(0)} claims/s`);
  }

  console.log(`landings per minute (${packets} independent packets, agent calls sleep ${sleep} s, true gate, no sandbox):`);
  let one;
  for (const count of [1, 3]) {
    const url = await newDatabase();
    const dir = makeRepo({ gate: "true", packets, sleep });
    try {
      const begin = process.hrtime.bigint();
      const codes = await Promise.all(Array.from({ length: count }, (_, at) => runFactory(dir, ["run", "--worker", `w${at}`, "--keep-going"], { FACTORY_LEDGER_URL: url })));
      const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
      const merged = mergedCount(dir);
      const perMinute = (merged / seconds) * 60;
      one ??= perMinute;
      console.log(
        `  PostgreSQL, ${count} worker process(es): ${perMinute.toFixed(1)} landings/min (${merged}/${packets} merged in ${seconds.toFixed(1)} s, exits ${codes.join(",")}), ${(perMinute / one).toFixed(2)}x one worker`,
      );
    } finally {
      removeRepo(dir);
    }
  }
  for (const concurrency of [1, 3]) {
    const dir = makeRepo({ gate: "true", packets, sleep });
    try {
      const begin = process.hrtime.bigint();
      const code = await runFactory(dir, ["run", "--concurrency", String(concurrency), "--keep-going"], {});
      const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
      const merged = mergedCount(dir);
      console.log(`  file,       one run --concurrency ${concurrency}: ${((merged / seconds) * 60).toFixed(1)} landings/min (${merged}/${packets} merged in ${seconds.toFixed(1)} s, exit ${code})`);
    } finally {
      removeRepo(dir);
    }
  }
} finally {
  await cluster.stop();
}

/** Claims `claims` packets, each once, shared out among the claimers; returns claims per second. */
async function timeClaims(root, ledgers, workers) {
  const ids = Array.from({ length: claims }, (_, at) => `C${String(at).padStart(4, "0")}`);
  let next = 0;
  const begin = process.hrtime.bigint();
  await Promise.all(
    ledgers.map(async (ledger, at) => {
      const owner = { run: `r${at}`, pid: at, host: "bench" };
      for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
        const claim = await claimPacket(root, ledger, { id, sha256: `sha-${id}`, file: `packets/${id}.toml` }, owner, workers[at]);
        if (!claim.ok) throw new Error(`${id} not claimed: ${claim.reason}`);
      }
    }),
  );
  return claims / (Number(process.hrtime.bigint() - begin) / 1e9);
}

function runFactory(dir, args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, stdio: "ignore", env: { ...process.env, NO_COLOR: "1", ...env } });
    child.on("close", (code) => resolve(code));
  });
}
