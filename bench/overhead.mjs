#!/usr/bin/env node
// What the factory adds on top of the agents and the gates: `factory run`
// over N packets with an instant agent (a shell one-liner) and one gate,
// against a bash script doing the same git work per packet (worktree add,
// plant, commit, gate, squash onto main, fast-forward the checkout, worktree
// and branch removal) and the same gate. Both run on identical fresh
// repositories, alternately, ROUNDS times; the ratio of the medians is
// printed for a `true` gate and for a small pytest gate.
//   node bench/overhead.mjs [packets=10] [rounds=5]
import { execFileSync } from "node:child_process";
import { interpreterFirstOnPath } from "../scripts/python-path.mjs";
import { BIN, GATE_COMMAND, makeRepo, median, mergedCount, removeRepo, BARE_SCRIPT as SCRIPT, time } from "./lib.mjs";

// Both sides run the interpreter itself, not a version manager's shim (which adds 0.3 s to every
// pytest start here, and the factory starts pytest more often than the script).
const interpreter = interpreterFirstOnPath();
if (interpreter) console.log(`(python3 on PATH is a shim: ${interpreter} goes first on PATH for both)`);

const packets = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 5);

for (const gate of ["true", "pytest"]) {
  const factory = [];
  const script = [];
  for (let round = 0; round < rounds; round++) {
    for (const which of round % 2 === 0 ? ["factory", "script"] : ["script", "factory"]) {
      const dir = makeRepo({ gate, packets });
      try {
        if (which === "factory") {
          factory.push(time(() => execFileSync(process.execPath, [BIN, "run"], { cwd: dir, stdio: "pipe", env: { ...process.env, NO_COLOR: "1" } })));
          const merged = mergedCount(dir);
          if (merged !== packets) throw new Error(`factory run merged ${merged} of ${packets} packets in ${dir}`);
        } else {
          script.push(time(() => execFileSync("bash", ["-c", SCRIPT, "bench", dir, GATE_COMMAND[gate]], { stdio: "pipe" })));
        }
      } finally {
        removeRepo(dir);
      }
    }
  }
  const f = median(factory);
  const s = median(script);
  console.log(`${gate} gate, ${packets} packets, median of ${rounds}: factory ${f.toFixed(2)} s, bare git script ${s.toFixed(2)} s, ratio ${(f / s).toFixed(2)}x`);
}
