// Shared by the benchmarks: a throwaway repository with N independent
// packets, an instant agent (a shell one-liner, optionally sleeping) and one
// gate, and a runner that times the built CLI on it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../bin/factory.js", import.meta.url));
const { worktreesDir } = await import(new URL("../dist/loop/context.js", import.meta.url).href);

/** Removes a bench repository and its worktrees' directory in the cache (outside it). */
export function removeRepo(dir) {
  const worktrees = worktreesDir(dir);
  rmSync(dir, { recursive: true, force: true });
  rmSync(worktrees, { recursive: true, force: true });
}

// The implementer writes src/<packet>.py; the reviewer holds the one invariant, citing that file.
const agentScript = (sleep) => `${sleep ? `sleep ${sleep}\n` : ""}if [ "$FACTORY_ROLE" = implementer ]; then
  mkdir -p src && printf 'VALUE = 1\\n' > "src/$FACTORY_PACKET.py"
  printf '{"packet":"%s","status":"complete","summary":"done","verification":{}}' "$FACTORY_PACKET" > "$FACTORY_OUTPUT"
else
  printf '{"packet":"%s","verdict":"accept","invariants":[{"id":"i","status":"held","evidence":"src/%s.py:1"}],"findings":[]}' "$FACTORY_PACKET" "$FACTORY_PACKET" > "$FACTORY_OUTPUT"
fi
echo '{"cost_usd":0}'`;

export const GATES = {
  true: `[[surfaces.app.gates]]\nname = "check"\nrun = "true"\n`,
  pytest: `[[surfaces.app.gates]]\nname = "tests"\nrun = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} tests"\ntests = true\n`,
  // As `factory init` writes it: {tests} names the planted files when they run on their own.
  "pytest-named": `[[surfaces.app.gates]]\nname = "tests"\nrun = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} {tests|tests}"\ntests = true\n`,
};
const PLANTED = { true: (id) => `tests/${id}.txt`, pytest: (id) => `tests/test_${id}.py`, "pytest-named": (id) => `tests/test_${id}.py` };
export const GATE_COMMAND = { true: "true", pytest: "python3 -m pytest -q -p no:cacheprovider --junitxml=$RUNDIR/junit.xml tests >/dev/null" };
GATE_COMMAND["pytest-named"] = GATE_COMMAND.pytest;

/** A planted test that fails at collection (the module it imports does not exist yet) or only when it runs (it imports inside the test). */
const PLANTED_TEST = {
  collection: (id) => `from src.${id} import VALUE\n\ndef test_${id}():\n    assert VALUE == 1\n`,
  runtime: (id) => `def test_${id}():\n    from src.${id} import VALUE\n    assert VALUE == 1\n`,
};

// The same git work by hand, per packet, as lean as a person would script it: the suite runs once per packet.
export const BARE_SCRIPT = `set -e
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

/**
 * A fresh repository with `packets` independent packets; `sleep` seconds per
 * agent call. With `sandbox`, agents and gates run in the bubblewrap sandbox
 * (the agent's script then lives in the git directory, which the sandbox
 * shows); without, `kind = "none"`. `parent` is where it is made; `install`
 * is the surface's install command.
 */
export function makeRepo({ gate, packets, sleep = 0, sandbox = false, parent = tmpdir(), planted = "collection", extraFiles = {}, mutants = 0, install }) {
  const dir = mkdtempSync(join(parent, "factory-bench-overhead-"));
  const git = (...args) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("config", "user.name", "bench");
  git("config", "user.email", "bench@factory.invalid");
  git("config", "gc.auto", "0");
  mkdirSync(join(dir, ".factory"));
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "tests"));
  const agent = join(dir, sandbox ? ".git" : "", "agent.sh");
  writeFileSync(agent, agentScript(sleep));
  writeFileSync(join(dir, "SPEC.md"), "# spec\n");
  writeFileSync(join(dir, "src/__init__.py"), "");
  writeFileSync(join(dir, "tests/test_base.py"), "def test_base():\n    assert 1 + 1 == 2\n");
  for (const [path, text] of Object.entries(extraFiles)) writeFileSync(join(dir, path), typeof text === "function" ? text(dir) : text);
  writeFileSync(join(dir, ".gitignore"), ".factory/state/\n.factory/runs/\n.factory/worktrees/\n");
  writeFileSync(
    join(dir, ".factory/config.toml"),
    `target_branch = "main"
[agents.instant]
kind = "command"
run = "sh ${agent}"
[tiers]
basic = { agent = "instant", model = "m" }
standard = { agent = "instant", model = "m" }
advanced = { agent = "instant", model = "m" }
[planning]
mutants = ${mutants}
${sandbox ? "" : '[sandbox]\nkind = "none"\n'}[surfaces.app]
dir = "."
${install ? `install = ${JSON.stringify(install)}\n` : ""}${GATES[gate]}`,
  );
  git("add", "-A");
  git("commit", "-qm", "spec");
  const spec = execFileSync("git", ["rev-parse", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();
  mkdirSync(join(dir, "packets/supplied"), { recursive: true });
  for (let i = 0; i < packets; i++) {
    const id = `P${String(i).padStart(2, "0")}`;
    writeFileSync(
      join(dir, "packets", `${id}-task.toml`),
      `id = "${id}"\ngoal = "task ${i}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["src/${id}.py"]\nbrief = "write src/${id}.py"\n[[invariants]]\nid = "i"\nassert = "holds"\n`,
    );
    // Planted: a test for the pytest gate; a data file for the true gate (a planted test needs a tests gate).
    mkdirSync(join(dir, "packets/supplied", id, "tests"), { recursive: true });
    writeFileSync(join(dir, "packets/supplied", id, PLANTED[gate](id)), gate === "true" ? "data\n" : PLANTED_TEST[planted](id));
  }
  git("add", "-A");
  git("commit", "-qm", "queue");
  return dir;
}

/** Seconds `action` took; a failure shows what the command printed. */
export function time(action) {
  const start = process.hrtime.bigint();
  try {
    action();
  } catch (error) {
    throw new Error(`${error.message.split("\n")[0]}\n${error.stderr?.toString() ?? ""}${error.stdout?.toString() ?? ""}`);
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** How many packets landed on main (by their commit subjects). */
export function mergedCount(dir) {
  return execFileSync("git", ["log", "--format=%s", "main"], { cwd: dir, encoding: "utf8" })
    .split("\n")
    .filter((line) => /P\d\d/.test(line)).length;
}

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A throwaway PostgreSQL cluster for a bench (the process ends, saying why, when it cannot start), and a fresh database of it per call of `database`. */
export async function benchCluster() {
  const { startCluster } = await import(new URL("../dist/process/postgres-cluster.js", import.meta.url).href);
  const started = await startCluster();
  if (!started.ok) {
    console.log(`PostgreSQL could not start: ${started.reason}`);
    process.exit(1);
  }
  let databases = 0;
  return { cluster: started.cluster, database: () => started.cluster.createDatabase(`bench_${++databases}`) };
}
