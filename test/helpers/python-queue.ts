import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { run } from "../../src/commands/run.js";
import { foldLedger } from "../../src/ledger/fold.js";
import { readLedger } from "../../src/ledger/store.js";
import { bufferOutput } from "../../src/log/output.js";
import type { TestRepo } from "./git-repo.js";
import { SCRIPTED_AGENT, withoutMutants } from "./loop-repo.js";

/** Whether real pytest can run here; prints why the caller's tests are skipped when it cannot. */
export function pytestAvailable(what: string): boolean {
  const pytest = spawnSync("python3", ["-m", "pytest", "--version"], { encoding: "utf8" });
  if (pytest.status !== 0) console.warn(`skipping ${what}: python3 -m pytest is not available (${(pytest.stderr || pytest.error?.message || "").trim()})`);
  return pytest.status === 0;
}

/**
 * A scripted command agent for Python target repositories, and `factory run`
 * over their queue: `const queue = usePythonQueue(afterEach)`. The agent's
 * script file and the repository are removed after each test.
 */
export function usePythonQueue(afterEach: (hook: () => void) => void) {
  const scriptFile = `${process.env.TMPDIR ?? "/tmp"}/factory-python-script-${process.pid}.json`;
  const made: TestRepo[] = []; // a test may make more than one: each is removed
  afterEach(() => {
    for (const repo of made.splice(0)) repo.cleanup();
    rmSync(scriptFile, { force: true });
  });
  return {
    /** The [agents.scripted] table and the tiers for the target's config. */
    agentConfig: `[agents.scripted]\nkind = "command"\nrun = "node ${SCRIPTED_AGENT} ${scriptFile}"\n[tiers]\nstandard = { agent = "scripted", model = "m" }\nadvanced = { agent = "scripted", model = "m" }\n`,
    /** Writes the scripted agent's script, for a run through the CLI. */
    writeScript(script: object): void {
      writeFileSync(scriptFile, JSON.stringify(script));
    },
    track(target: TestRepo): TestRepo {
      made.push(target);
      return target;
    },
    async run(target: TestRepo, script: object) {
      writeFileSync(scriptFile, JSON.stringify(script));
      const output = bufferOutput();
      const code = await run({ cwd: target.dir, once: false, packet: undefined, maxCost: undefined, concurrency: undefined, output, signal: new AbortController().signal });
      const { events } = await readLedger(target.dir);
      const state = foldLedger(events);
      return { code, out: output.text(), state, events, record: state.packets.get("P01") };
    },
  };
}

/** A pytest plugin that turns every failing test into a pass: in the JUnit report, the summary line and the exit status alike. */
export const FORCE_PASS_PLUGIN = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
`;

/** The pytest gate as the python preset writes it, for a project run from its root. */
export const PYTEST_GATE = "python3 -m pytest -q -p no:cacheprovider --ignore=packets --junitxml={junit}";

/**
 * A small Python project in `repo` (not committed): `pkg/calc.py` with add(), its tests (`tests/test_calc.py`
 * unless `tests` names others), and a config with one pytest surface (its `install`, if given) followed by
 * `config` (agents, limits).
 */
export function writePythonProject(repo: TestRepo, options: { config: string; tests?: Record<string, string>; gate?: string; install?: string }): void {
  repo.write("SPEC.md", "double things\n");
  repo.write("pkg/__init__.py", "");
  repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
  repo.write("tests/__init__.py", "");
  for (const [path, text] of Object.entries(options.tests ?? { "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n" })) repo.write(path, text);
  repo.write(".gitignore", "__pycache__/\n");
  repo.write(
    ".factory/config.toml",
    `[surfaces.py]\ndir = "."\n${options.install ? `install = ${JSON.stringify(options.install)}\n` : ""}  [[surfaces.py.gates]]\n  name = "pytest"\n  run = "${options.gate ?? PYTEST_GATE}"\n  tests = true\n${withoutMutants(options.config)}`,
  );
}

/** P01 ("Add double", pkg/double.py) on a Python project whose spec is at `spec`, its planted test, committed. */
export function queueDoublePacket(repo: TestRepo, spec: string, allowed: readonly string[] = ["pkg/double.py"]): void {
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"\ngoal = "Add double"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ${JSON.stringify(allowed)}\nbrief = "Add pkg/double.py with double(n) = n * 2."\n[[invariants]]\nid = "doubles"\nassert = "double(n) == n * 2"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_double.py", "from pkg.double import double\n\n\ndef test_double():\n    assert double(21) == 42\n");
  repo.commit("queue");
}
