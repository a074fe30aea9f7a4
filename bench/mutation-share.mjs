// Issue 40 §5: what the post-landing mutation check costs a night. The published history of gyp-next inside
// node-gyp (the Python replay of test/e2e/replay-published.test.ts: real pytest, four honest steps and one
// true catch) is run twice through the built CLI, once with the default mutation setting ([planning]
// mutants = 20, what init writes, and mutants_share's default) and once with mutants = 0, and the two
// wall-clock times compared.
// Target: the default at most 1.5x the run without it.
// Usage: node bench/mutation-share.mjs [rounds]   (needs the npm registry once: versions are cached)
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeReplayQueue } from "../scripts/replay-queue.mjs";
import { BIN, removeRepo } from "./lib.mjs";

const NAME = "node-gyp";
const VERSIONS = ["10.0.1", "10.1.0", "10.2.0", "11.1.0", "11.3.0", "11.4.2"];
const AGENT = fileURLToPath(new URL("../sample/agent/scripted-agent.mjs", import.meta.url));
const rounds = Number(process.argv[2] ?? 1);

/** A version's gyp directory, downloaded once into the same cache the tests use. */
function gypTree(version) {
  const cache = join(process.env.FACTORY_TEST_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "factory-tests"), "npm", `${NAME}@${version}.all`);
  if (!existsSync(join(cache, "package"))) {
    const scratch = `${cache}.partial-${process.pid}`;
    mkdirSync(scratch, { recursive: true });
    execFileSync("npm", ["pack", `${NAME}@${version}`, "--pack-destination", scratch, "--silent"], { stdio: "pipe" });
    const tarball = readdirSync(scratch).find((entry) => entry.endsWith(".tgz"));
    execFileSync("tar", ["xzf", join(scratch, tarball), "-C", scratch]);
    rmSync(join(scratch, tarball));
    renameSync(scratch, cache);
  }
  const root = join(cache, "package", "gyp");
  const files = new Map();
  const walk = (prefix) => {
    for (const entry of readdirSync(join(root, prefix)).sort()) {
      const path = prefix ? `${prefix}/${entry}` : entry;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else files.set(path, readFileSync(join(root, path)));
    }
  };
  walk("");
  return files;
}

/** One replay run with the given [planning] lines; returns its seconds and what the mutation check said. */
function replay(trees, planning) {
  const dir = mkdtempSync(join(tmpdir(), "factory-bench-mutants-"));
  const scratch = mkdtempSync(join(tmpdir(), "factory-bench-mutants-script-"));
  const git = (...args) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", ...args], { cwd: dir, encoding: "utf8" });
  try {
    git("init", "-q", "-b", "main");
    const [base, ...later] = VERSIONS;
    for (const [path, content] of trees.get(base)) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    writeFileSync(join(dir, "REPLAY-SPEC.md"), `Replay of ${NAME}'s published versions.\n`);
    mkdirSync(join(dir, ".factory"), { recursive: true });
    writeFileSync(
      join(dir, ".factory", "config.toml"),
      `[surfaces.py]\ndir = "."\n  [[surfaces.py.gates]]\n  name = "pytest"\n  run = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} {tests|pylib}"\n  tests = true\n[planning]\n${planning}\n[agents.replay]\nkind = "command"\nrun = "node ${AGENT} ${join(scratch, "script.json")}"\n[tiers]\nstandard = { agent = "replay", model = "published" }\nadvanced = { agent = "replay", model = "published" }\n`,
    );
    appendFileSync(join(dir, ".git", "info", "exclude"), "\n.factory/state/\n.factory/runs/\n__pycache__/\n*.pyc\n");
    git("add", "-A");
    git("commit", "-qm", "base");
    const spec = git("rev-parse", "HEAD").trim();
    let previous = trees.get(base);
    const steps = later.map((version) => {
      const tree = trees.get(version);
      const changes = [...tree].filter(([path, content]) => !previous.get(path)?.equals(content)).map(([path, content]) => ({ path, text: content.toString("utf8") }));
      for (const path of previous.keys()) if (!tree.has(path)) changes.push({ path });
      previous = tree;
      return { label: `${NAME} ${version}`, subject: `published ${version}`, changes };
    });
    writeReplayQueue({ target: dir, spec, specPath: "REPLAY-SPEC.md", scriptFile: join(scratch, "script.json"), steps, isTest: (path) => /^pylib\/.*_test\.py$/.test(path), isSupport: () => false });
    git("add", "-A");
    git("commit", "-qm", "queue");
    const started = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [BIN, "run"], { cwd: dir, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const said = `${run.stdout}${run.stderr}`
      .split("\n")
      .filter((line) => line.includes("mutants:") && !line.includes("running"))
      .map((line) => line.trim());
    const merged = (git("log", "--format=%s", "main").match(/\[U\d+\]/g) ?? []).length;
    if (process.env.BENCH_LOG) {
      const runs = join(dir, ".factory", "runs");
      for (const name of readdirSync(runs).filter((entry) => entry.startsWith("run-"))) console.log(readFileSync(join(runs, name), "utf8"));
    }
    return { seconds, said, merged };
  } finally {
    removeRepo(dir);
    rmSync(scratch, { recursive: true, force: true });
  }
}

const trees = new Map(VERSIONS.map((version) => [version, gypTree(version)]));
for (let round = 1; round <= rounds; round++) {
  const without = replay(trees, "mutants = 0");
  const withDefault = replay(trees, "mutants = 20"); // mutants_share as its default
  console.log(
    `round ${round}: mutants = 0: ${without.seconds.toFixed(1)} s (${without.merged} merged); mutants = 20, default share: ${withDefault.seconds.toFixed(1)} s (${withDefault.merged} merged)`,
  );
  console.log(`  ratio ${(withDefault.seconds / without.seconds).toFixed(2)}x (target at most 1.5x)`);
  for (const line of withDefault.said) console.log(`  ${line}`);
}
