#!/usr/bin/env node
// The fleet's landings (issue 56 §1): separate `factory run --worker` processes, each in its own clone of one
// bare remote, on one PostgreSQL ledger, as a team runs them. A Python project with a short suite (pytest and a
// test that takes 1 s), the tests gate as `factory init` writes it, independent packets whose agent calls wait
// SLEEP seconds (as real agents wait on their model). One worker, then three, on the same queue; prints the
// landings per minute, three workers against one, and the gatings of a combined tree per landing (a re-gate of
// one candidate on a moved tip, or one gating of a merge batch), read from the workers' own output.
//   node bench/fleet.mjs [packets=9] [sleep=20] [workers=3]
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, benchCluster, makeRepo, removeRepo } from "./lib.mjs";

const packets = Number(process.argv[2] ?? 9);
const sleep = Number(process.argv[3] ?? 20);
const many = Number(process.argv[4] ?? 3);

const { cluster, database } = await benchCluster();

const slowTest = { "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(1)\n" };
const git = (cwd, ...args) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

console.log(`landings per minute: ${packets} independent packets, agent calls wait ${sleep} s, a pytest suite of about 2-3 s, one clone per worker, one bare remote, PostgreSQL`);
let one;
try {
  for (const count of [1, many]) {
    const url = await database();
    const source = makeRepo({ gate: "pytest-named", packets, sleep, extraFiles: slowTest });
    appendFileSync(join(source, ".factory/config.toml"), '[target]\nremote = "origin"\n');
    git(source, "commit", "-qam", "the shared remote");
    const place = mkdtempSync(join(tmpdir(), "factory-bench-fleet-"));
    const remote = join(place, "remote.git");
    git(place, "clone", "-q", "--bare", source, remote);
    const clones = Array.from({ length: count }, (_, at) => {
      const clone = join(place, `w${at}`);
      git(place, "clone", "-q", remote, clone);
      git(clone, "config", "user.name", "bench");
      git(clone, "config", "user.email", "bench@factory.invalid");
      return clone;
    });
    try {
      const begin = process.hrtime.bigint();
      const ends = await Promise.all(clones.map((clone, at) => runWorker(clone, `w${at}`, url)));
      const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
      const merged = git(remote, "log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main").split("\n").filter(Boolean).length;
      const gatings = ends.reduce((sum, end) => sum + (end.out.match(/gating the combined tree|together on main at/g) ?? []).length, 0);
      const perMinute = (merged / seconds) * 60;
      one ??= perMinute;
      console.log(
        `  ${count} worker(s): ${perMinute.toFixed(2)} landings/min (${merged}/${packets} merged in ${seconds.toFixed(1)} s, exits ${ends.map((end) => end.code).join(",")}), ` +
          `${(perMinute / one).toFixed(2)}x one worker; ${gatings} gating(s) of a combined tree, ${(gatings / Math.max(1, merged)).toFixed(2)} per landing`,
      );
      if (process.env.FLEET_BENCH_KEEP) for (const [at, end] of ends.entries()) console.log(`--- w${at}\n${end.out}`);
    } finally {
      for (const clone of clones) removeRepo(clone);
      rmSync(place, { recursive: true, force: true });
      removeRepo(source);
    }
  }
} finally {
  await cluster.stop();
}

function runWorker(dir, name, url) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "run", "--worker", name, "--keep-going"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1", FACTORY_LEDGER_URL: url },
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.on("close", (code) => resolve({ code, out }));
  });
}
