#!/usr/bin/env node
// What users feel when the suite dominates: a Python project whose suite
// takes about 2 s, instant agents, and the tests gate as `factory init`
// writes it (`{tests}` names the planted files when they run on their own).
// For a planted test that fails at collection and one that fails only when
// it runs, `factory run` sequentially and with --concurrency 3, against a
// bare git script that runs the suite once per packet. Each pytest session
// is counted by the project's conftest.py: a session that collects the
// whole suite is a full-suite run. Prints full-suite runs per merged packet
// and wall time.   node bench/suite-runs.mjs [packets=6] [--pytest-plugins-off]
// With --pytest-plugins-off, the pytest plugins installed beside python3
// (hypothesis and pytest-benchmark on the development VM: 1.3 s of a 1.6 s
// pytest start) are off on both sides, as in a project's own virtual
// environment without them.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installedPytestPluginsOff, interpreterFirstOnPath } from "../scripts/python-path.mjs";
import { BARE_SCRIPT, BIN, GATE_COMMAND, makeRepo, mergedCount, removeRepo, time } from "./lib.mjs";

const interpreter = interpreterFirstOnPath();
if (interpreter) console.log(`(python3 on PATH is a shim: ${interpreter} goes first on PATH)`);
const args = process.argv.slice(2);
const off = args.includes("--pytest-plugins-off") ? installedPytestPluginsOff(tmpdir()) : undefined;
if (off) console.log(`(the installed pytest plugins ${off.plugins.join(", ")} are off on both sides)`);
process.on("exit", () => off && rmSync(off.dir, { recursive: true, force: true }));
const packets = Number(args.find((arg) => !arg.startsWith("--")) ?? 6);

// Every session appends whether it collected the suite's 2 s test_slow (a full-suite run: the planted files named on
// their own never include it, however many planted tests a merge batch names at once), to a file outside the
// sandbox (the bench runs with kind = "none").
const counting = {
  "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(2)\n",
  "conftest.py": (dir) =>
    `def pytest_collection_finish(session):\n    with open(${JSON.stringify(join(dir, ".git", "sessions"))}, "a") as f:\n        f.write(f"{int(any(item.name == 'test_slow' for item in session.items))}\\n")\n`,
};

function sessions(dir) {
  try {
    return readFileSync(join(dir, ".git", "sessions"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

const rows = [];
for (const planted of ["collection", "runtime"]) {
  let sequential;
  for (const how of ["bare script", "factory, 1 worker", "factory, 3 workers"]) {
    const dir = makeRepo({ gate: "pytest-named", packets, planted, extraFiles: counting });
    try {
      const seconds = time(() =>
        how === "bare script"
          ? execFileSync("bash", ["-c", BARE_SCRIPT, "bench", dir, GATE_COMMAND["pytest-named"]], { stdio: "pipe" })
          : execFileSync(process.execPath, [BIN, "run", "--concurrency", how.includes("3") ? "3" : "1"], { cwd: dir, stdio: "pipe", env: { ...process.env, NO_COLOR: "1" } }),
      );
      const merged = how === "bare script" ? packets : mergedCount(dir);
      if (merged !== packets) throw new Error(`${how} merged ${merged} of ${packets} packets in ${dir}`);
      const all = sessions(dir);
      const full = all.filter((slow) => slow === 1).length;
      if (how === "factory, 1 worker") sequential = seconds;
      rows.push({ planted, how, full, partial: all.length - full, seconds, sequential });
    } finally {
      removeRepo(dir);
    }
  }
}

for (const row of rows) {
  const bare = rows.find((other) => other.planted === row.planted && other.how === "bare script");
  const against = row.how === "bare script" ? "" : `, ${(row.seconds / bare.seconds).toFixed(2)}x the bare script`;
  const speedUp = row.how === "factory, 3 workers" ? `, ${(row.sequential / row.seconds).toFixed(2)}x faster than 1 worker` : "";
  console.log(
    `planted test failing at ${row.planted}, ${row.how}: ${(row.full / packets).toFixed(2)} full-suite runs per merged packet (${row.full} full, ${row.partial} of named files), ${row.seconds.toFixed(1)} s${against}${speedUp}`,
  );
}
