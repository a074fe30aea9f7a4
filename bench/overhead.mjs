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
import { rmSync } from "node:fs";
import { interpreterFirstOnPath } from "../scripts/python-path.mjs";
import { BIN, GATE_COMMAND, makeRepo, median, mergedCount, time } from "./lib.mjs";

// Both sides run the interpreter itself, not a version manager's shim (which adds 0.3 s to every
// pytest start here, and the factory starts pytest more often than the script).
const interpreter = interpreterFirstOnPath();
if (interpreter) console.log(`(python3 on PATH is a shim: ${interpreter} goes first on PATH for both)`);

const packets = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 5);

// The same git work by hand, per packet, as lean as a person would script it.
const SCRIPT = `set -e
cd "$1"; GATE="$2"
for toml in packets/P*-task.toml; do
  id=$(basename "$toml" -task.toml)
  wt=".factory/worktrees/$id"; RUNDIR=".factory/runs/$id"; mkdir -p "$RUNDIR"
  git worktree add -q -b "factory/$id" "$wt" main
  mkdir -p "$wt/tests" && cp packets/supplied/$id/tests/* "$wt/tests/"
  git -C "$wt" add tests && git -C "$wt" commit -qm "plant $id"
  (cd "$wt" && FACTORY_ROLE=implementer FACTORY_PACKET=$id FACTORY_OUTPUT=$OLDPWD/$RUNDIR/result.json sh ../../../agent.sh >/dev/null)
  git -C "$wt" add -A && git -C "$wt" commit -qm "attempt $id"
  (cd "$wt" && RUNDIR=$OLDPWD/$RUNDIR eval "$GATE")
  (cd "$wt" && FACTORY_ROLE=reviewer FACTORY_PACKET=$id FACTORY_OUTPUT=$OLDPWD/$RUNDIR/review.json sh ../../../agent.sh >/dev/null)
  tree=$(git rev-parse "factory/$id^{tree}")
  commit=$(git commit-tree "$tree" -p main -m "$id")
  old=$(git rev-parse main)
  git update-ref refs/heads/main "$commit" "$old"
  git read-tree -m -u "$old" "$commit"
  git worktree remove --force "$wt"
  git branch -q -D "factory/$id"
done`;

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
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const f = median(factory);
  const s = median(script);
  console.log(`${gate} gate, ${packets} packets, median of ${rounds}: factory ${f.toFixed(2)} s, bare git script ${s.toFixed(2)} s, ratio ${(f / s).toFixed(2)}x`);
}
