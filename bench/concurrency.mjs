#!/usr/bin/env node
// How a run scales with workers: the same queue of independent packets whose
// agent calls each take SLEEP seconds, run with --concurrency 1, 2, 4 and 8
// on identical fresh repositories. Prints wall time, the speed-up against one
// worker, how many packets merged and how the run ended.
//   node bench/concurrency.mjs [packets=8] [sleep=5]
import { execFileSync } from "node:child_process";
import { BIN, makeRepo, mergedCount, removeRepo } from "./lib.mjs";

const packets = Number(process.argv[2] ?? 8);
const sleep = Number(process.argv[3] ?? 5);

let single;
for (const workers of [1, 2, 4, 8]) {
  const dir = makeRepo({ gate: "true", packets, sleep });
  try {
    const start = process.hrtime.bigint();
    let code = 0;
    try {
      execFileSync(process.execPath, [BIN, "run", "--concurrency", String(workers)], { cwd: dir, stdio: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    } catch (error) {
      code = error.status ?? -1;
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    single ??= seconds;
    console.log(`--concurrency ${workers}: ${seconds.toFixed(1)} s, ${(single / seconds).toFixed(2)}x faster than 1, ${mergedCount(dir)}/${packets} merged, exit ${code}`);
  } finally {
    removeRepo(dir);
  }
}
