#!/usr/bin/env node
// Installs per packet on a pnpm project: a lock file, one dependency with an
// executable (a local package: no registry needed) whose pnpm shim names the
// absolute path of the worktree it was installed in, and a gate that runs
// it. `factory run` over N packets that do not change the lock file: how
// many worktrees ran `pnpm install`, how many got a copy, and the wall time.
//   node bench/installs.mjs [packets=6]
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, makeRepo, mergedCount, removeRepo, time } from "./lib.mjs";

const packets = Number(process.argv[2] ?? 6);
const bin = fileURLToPath(new URL("../node_modules/.bin", import.meta.url));
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: "1" };

const dir = makeRepo({
  gate: "true",
  packets,
  install: "pnpm install --frozen-lockfile",
  extraFiles: {
    "package.json": JSON.stringify({ name: "bench", private: true, devDependencies: { "say-ok": "file:./vendor/say-ok" } }),
  },
});
try {
  const git = (...args) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  execFileSync("mkdir", ["-p", join(dir, "vendor/say-ok")]);
  writeFileSync(join(dir, "vendor/say-ok/package.json"), JSON.stringify({ name: "say-ok", version: "1.0.0", bin: { "say-ok": "bin.js" } }));
  writeFileSync(join(dir, "vendor/say-ok/bin.js"), "#!/usr/bin/env node\nconsole.log('ok');\n");
  execFileSync("pnpm", ["install"], { cwd: dir, env, stdio: "pipe" }); // the user's own first install: the lock file
  rmSync(join(dir, "node_modules"), { recursive: true, force: true });
  writeFileSync(join(dir, ".gitignore"), `${readFileSync(join(dir, ".gitignore"), "utf8")}node_modules/\n`);
  const config = join(dir, ".factory/config.toml");
  writeFileSync(config, `${readFileSync(config, "utf8")}\n[[surfaces.app.gates]]\nname = "tool"\nrun = "pnpm exec say-ok"\n`);
  git("add", "-A");
  git("commit", "-qm", "a pnpm project");

  const seconds = time(() => execFileSync(process.execPath, [BIN, "run"], { cwd: dir, stdio: "pipe", env }));
  const merged = mergedCount(dir);
  const logs = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else if (entry.name.startsWith("install-")) logs.push(readFileSync(join(at, entry.name), "utf8"));
    }
  };
  walk(join(dir, ".factory/runs"));
  const copied = logs.filter((log) => log.includes("node_modules copied from")).length;
  console.log(
    `${merged}/${packets} merged in ${seconds.toFixed(1)} s; ${logs.length} worktrees needed node_modules: ${logs.length - copied} ran pnpm install, ${copied} got a copy (${((logs.length - copied) / packets).toFixed(2)} installs per packet)`,
  );
} finally {
  removeRepo(dir);
}
