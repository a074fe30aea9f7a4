#!/usr/bin/env node
// Measures how `factory lint`, `plan` and `status` scale with the size of the
// queue: a throwaway repository with N packets in dependency chains, timed
// end to end through the built CLI. Usage: node bench/queue.mjs [N ...]
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../bin/factory.js", import.meta.url));
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);

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
      writeFileSync(join(dir, "packets", `${id}-task.toml`), `id = "${id}"\ngoal = "task ${i}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nrequires = ${requires}\nbrief = "do task ${i}"\n[[invariants]]\nid = "i"\nassert = "holds"\n`);
    }
    git("add", "-A");
    git("commit", "-qm", "queue");
    const row = [`${size} packets`];
    for (const command of ["lint", "plan", "status"]) {
      const start = process.hrtime.bigint();
      execFileSync(process.execPath, [bin, command, "--json"], { cwd: dir, stdio: "pipe", env: { ...process.env, NO_COLOR: "1" } });
      row.push(`${command} ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(0)} ms`);
    }
    console.log(row.join("  "));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
