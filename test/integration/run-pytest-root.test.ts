import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { status } from "../../src/commands/status.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { pytestAvailable, usePythonQueue } from "../helpers/python-queue.js";

/**
 * A Python repository set up the way a user has it: pytest collects from the
 * repository root (no testpaths, no --ignore), and .gitignore knows nothing
 * of __pycache__ or .pytest_cache. Two packets with planted tests.
 */
const available = pytestAvailable("the pytest-from-the-root tests");
const queue = usePythonQueue(afterEach);

const DOUBLE_PY = "def double(n):\n    return n * 2\n";
const TRIPLE_PY = "def triple(n):\n    return n * 3\n";

function packet(id: string, spec: string, module: string, extra = ""): string {
  return `id = "${id}"\ngoal = "Add ${module}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/${module}.py"]\n${extra}brief = "Add pkg/${module}.py."\n[[invariants]]\nid = "works"\nassert = "${module} works"\n`;
}

function pythonTarget(options: { gate?: string; gateTimeout?: string; pyproject?: string; plantedAt?: string } = {}): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  repo.write("SPEC.md", "numbers\n");
  repo.write("pkg/__init__.py", "");
  repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
  repo.write("tests/__init__.py", "");
  repo.write("tests/test_calc.py", "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n");
  if (options.pyproject) repo.write("pyproject.toml", options.pyproject);
  repo.write(".gitignore", ".factory/state/\n.factory/worktrees/\n.factory/runs/\n"); // no __pycache__, no .pytest_cache
  repo.write(
    ".factory/config.toml",
    `[surfaces.py]
dir = "."
  [[surfaces.py.gates]]
  name = "pytest"
  run = "${options.gate ?? "python3 -m pytest -q --junitxml={junit}"}"
  tests = true
${queue.agentConfig}[limits]
max_attempts = 2
gate_timeout = "${options.gateTimeout ?? "60s"}"
`,
  );
  const spec = repo.commit("python project");
  repo.write("packets/P01-double.toml", packet("P01", spec, "double"));
  repo.write(`packets/supplied/P01/${options.plantedAt ?? "tests"}/test_double.py`, "from pkg.double import double\n\n\ndef test_double():\n    assert double(21) == 42\n");
  repo.write("packets/P02-triple.toml", packet("P02", spec, "triple", `requires = ["P01"]\n`));
  repo.write("packets/supplied/P02/tests/test_triple.py", "from pkg.triple import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n");
  repo.commit("queue");
  return repo;
}

const runQueue = queue.run;

const honest = { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }] }, P02: { implementer: [{ write: { "pkg/triple.py": TRIPLE_PY } }] } };

function mainTestsPass(target: TestRepo): boolean {
  return spawnSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], { cwd: target.dir, encoding: "utf8" }).status === 0;
}

describe.skipIf(!available)("factory run on a Python repository whose pytest runs from the root", () => {
  it("merges both packets; no other packet's planted test is collected and no bytecode or cache lands on main", async () => {
    const target = pythonTarget();
    const { code, out, state } = await runQueue(target, honest);
    expect(out).toContain("P01#1 → merged");
    expect(out).toContain("P02#1 → merged");
    expect(code).toBe(0);
    expect(out).toContain("gate pytest: pass — 2/2 passed");
    expect(out).toContain("gate pytest: pass — 3/3 passed"); // P02: add, double, triple — never P02's planted copy under packets/
    expect(state.packets.get("P02")?.status.state).toBe("merged");
    const files = target.git("ls-tree", "-r", "--name-only", "main").trim().split("\n");
    expect(files.filter((file) => /__pycache__|\.pyc$|\.pytest_cache/.test(file))).toEqual([]);
    expect(files).toContain("tests/test_double.py");
    expect(files).toContain("tests/test_triple.py");
    expect(mainTestsPass(target)).toBe(true);
  });

  it("keeps packets/ out of the agent's worktree and on main exactly as it was", async () => {
    const target = pythonTarget();
    const probe = { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY }, run: "ls packets > pkg/seen.txt 2>&1 || echo absent > pkg/seen.txt" }] } };
    const before = target.git("rev-parse", "main:packets");
    await runQueue(target, { ...honest, ...probe });
    const runDir = `${target.dir}/.factory/runs/P01/attempt-1`;
    expect(spawnSync("cat", [`${runDir}/diff.patch`], { encoding: "utf8" }).stdout).toContain("+absent");
    expect(target.git("rev-parse", "main:packets")).toBe(before);
  });

  it("fails an implementation that makes the planted test vanish (skipped at import), and never merges it", async () => {
    const target = pythonTarget();
    const vanish = "import pytest\n\npytest.skip('not today', allow_module_level=True)\n\n\ndef double(n):\n    return 0\n";
    const { code, out, state } = await runQueue(target, { P01: { implementer: [{ write: { "pkg/double.py": vanish } }] } });
    expect(code).toBe(1);
    expect(out).toMatch(/gate pytest: fail — 1 planted test\(s\) not passing/);
    expect(state.packets.get("P01")?.status.state).toBe("blocked");
    expect(target.git("log", "--format=%s", "main").trim().split("\n")[0]).toBe("queue");
  });

  it("runs the planted tests on their own through {tests}: a new test module that patches the implementation at import is caught; honest work passes both runs", async () => {
    const gate = "python3 -m pytest -q --junitxml={junit} {tests}";
    const patcher = "import pkg.double\n\npkg.double.double = lambda n: n * 2\n\n\ndef test_setup():\n    assert True\n";
    const sneaky = { write: { "pkg/double.py": "def double(n):\n    return 0\n", "tests/test_aa_setup.py": patcher } };
    const target = pythonTarget({ gate });
    target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace('allowed_paths = ["pkg/double.py"]', 'allowed_paths = ["pkg/double.py", "tests/test_aa_setup.py"]'));
    target.commit("P01 may add a test module");
    const caught = await runQueue(target, { P01: { implementer: [sneaky] } });
    // The whole suite runs without the change's new test module (the verdict tree), and the planted tests on their own: both fail.
    expect(caught.out).toMatch(/gate pytest: fail — .*without the change's new test modules \(tests\/test_aa_setup\.py\): something the change added steers the team's tests/);
    expect(caught.out).toMatch(/gate pytest \(planted only\): fail — 1 planted test\(s\) do not pass when run on their own/);
    expect(caught.code).toBe(1);
    expect(target.git("log", "--format=%s", "main").trim().split("\n")[0]).toBe("P01 may add a test module");
    target.cleanup();
    // Plainly wrong: it fails in the whole suite as well, so nothing beside it is blamed.
    const wrongTarget = pythonTarget({ gate });
    const wrong = await runQueue(wrongTarget, { P01: { implementer: [{ write: { "pkg/double.py": "def double(n):\n    return 0\n" } }] } });
    expect(wrong.out).toMatch(/gate pytest \(planted only\): fail — 1 planted test\(s\) do not pass when run on their own \(\d+m?s\)/);
    expect(wrong.out).not.toContain("something else collected beside them");

    wrongTarget.cleanup(); // the helper removes only the last repository it tracks
    const honestTarget = pythonTarget({ gate });
    const merged = await runQueue(honestTarget, honest);
    expect(merged.out).toMatch(/gate pytest \(planted only\): pass — 1 planted test\(s\) pass on their own/);
    expect(merged.code).toBe(0);
  }, 180_000);

  it("run on their own, the planted files' cases that failed the same way at the baseline are not the work's: honest work on a file with a known failure merges", async () => {
    const gate = "python3 -m pytest -q --junitxml={junit} {tests}";
    const target = pythonTarget({ gate });
    const calc = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_known_bug():\n    assert add(0.1, 0.2) == 0.3\n";
    target.write("tests/test_calc.py", calc);
    // The packet plants a new version of that file: one case more, for the work.
    target.write("packets/supplied/P01/tests/test_calc.py", `${calc}\n\ndef test_double_adds():\n    from pkg.double import double\n\n    assert double(add(1, 1)) == 4\n`);
    target.git("rm", "--quiet", "packets/supplied/P01/tests/test_double.py");
    target.commit("a known failure, and a planted version of its file");
    const { code, out } = await runQueue(target, { P01: honest.P01 });
    expect(out).toMatch(/gate pytest \(planted only\): pass/);
    expect(out, out).toContain("P01#1 → merged");
    expect(code).toBe(1); // P02 (triple) has no implementer in this script: only P01 is this test's
  }, 180_000);

  it("a planted file that cannot be collected before the work does not hide the others: pytest stops at it, so they are run again without it, and honest work merges", async () => {
    const target = pythonTarget({ gate: "python3 -m pytest -q --junitxml={junit} {tests}" });
    // tests/test_double.py imports pkg.double at the top (collection fails before the work); a new version of test_calc.py rides along.
    target.write(
      "packets/supplied/P01/tests/test_calc.py",
      `${target.read("tests/test_calc.py")}\n\ndef test_add_negative():\n    from pkg.double import double\n\n    assert double(add(-1, -1)) == -4\n`,
    );
    target.commit("a second planted file beside one that cannot be collected yet");
    const { out } = await runQueue(target, { P01: honest.P01 });
    expect(out).not.toContain("never ran");
    expect(out, out).toContain("P01#1 → merged");
  }, 180_000);

  it("fails an implementation that ends the test run early with exit 0 and no report", async () => {
    const target = pythonTarget();
    const exits = "import os\n\nos._exit(0)\n";
    const { out } = await runQueue(target, { P01: { implementer: [{ write: { "pkg/double.py": exits } }] } });
    expect(out).toMatch(/gate pytest: fail — wrote no JUnit report .* it did on the baseline/);
    expect(out).not.toContain("→ merged");
  });

  it("gates judge the commit that lands: a conftest hidden by a self-ignoring .gitignore does not help broken code through", async () => {
    const target = pythonTarget();
    const hidden = {
      "pkg/double.py": "def double(n):\n    return 0\n",
      "tests/conftest.py": "import pkg.double\n\npkg.double.double = lambda n: n * 2\n",
      "tests/.gitignore": "conftest.py\n.gitignore\n",
    };
    const { out } = await runQueue(target, { P01: { implementer: [{ write: hidden }] } });
    expect(out).toMatch(/P01#1 {3}gate pytest: fail — 1 planted test\(s\) not passing/);
    expect(out).not.toContain("→ merged");
  });

  it("gates judge the commit that lands: bytecode left beside the source is not what lands", async () => {
    const target = pythonTarget();
    const compiled = {
      write: { "pkg/good.py": DOUBLE_PY },
      run: "python3 -c \"import py_compile; py_compile.compile('pkg/good.py', cfile='pkg/double.pyc')\" && rm pkg/good.py && touch pkg/notes.txt",
    };
    const { out } = await runQueue(target, { P01: { implementer: [{ ...compiled, write: { ...compiled.write } }] } });
    expect(out).toMatch(/P01#1 {3}gate pytest: fail/);
    expect(out).not.toContain("→ merged");
  });

  it("a planted test outside the runner's testpaths never ran: the packet is defective, before any agent is paid", async () => {
    const target = pythonTarget({ pyproject: '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', plantedAt: "checks" });
    const { code, out, events } = await runQueue(target, honest);
    expect(code).toBe(1);
    expect(out).toContain("planted test checks/test_double.py never ran: put it where the runner collects tests (its name and directory)");
    expect(events.filter((event) => event.kind === "agent-finished")).toEqual([]);
  });

  it("a baseline that cannot run the suite is refused by the preflight, before anything is claimed, never an empty baseline", async () => {
    const target = pythonTarget({ gate: "python3 -m pytest -q no_such_dir --junitxml={junit}" });
    const { code, out, events } = await runQueue(target, honest);
    expect(out).toMatch(/factory run refused: surface "py": the baseline at [0-9a-f]{10} fails: test gate "pytest" .*(could not be measured|cannot run the suite)/);
    expect(out).toContain("Nothing was claimed or spent.");
    expect(code).toBe(2);
    expect(events).toEqual([]);
  });

  it("a gate that hangs on the candidate (it finished on the baseline) is the work's failure, not the machine's", async () => {
    const target = pythonTarget({ gateTimeout: "10s" }); // room for pytest in the sandbox on a loaded machine; the hang waits it out
    const loops = "def double(n):\n    while True:\n        pass\n";
    const { code, out, state } = await runQueue(target, { P01: { implementer: [{ write: { "pkg/double.py": loops } }, { write: { "pkg/double.py": DOUBLE_PY } }] }, P02: honest.P02 });
    expect(out).toMatch(/P01#1 {3}gate pytest: fail — timed out after 10s on this change; it finished on the baseline/);
    expect(out).not.toContain("two environment errors");
    expect(out).toContain("P01#2 → merged");
    expect(code).toBe(0);
    expect(state.packets.get("P01")?.attemptsUsed).toBe(2);
  }, 60_000);

  it("the same failure twice blocks at once, and status shows the fingerprint", async () => {
    const target = pythonTarget();
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace("max_attempts = 2", "max_attempts = 5"));
    target.commit("more attempts");
    const wrong = { write: { "pkg/double.py": "def double(n):\n    return n + 2\n" } };
    const { code, out, state, events } = await runQueue(target, { P01: { implementer: [wrong] } });
    expect(code).toBe(1);
    const record = state.packets.get("P01");
    expect(record?.attemptsUsed).toBe(2);
    expect(record?.fingerprints).toHaveLength(2);
    expect(record?.fingerprints[0]).toBe(record?.fingerprints[1]);
    expect(out).toContain(`the same failure twice: ${record?.fingerprints[0]}`);
    expect(events.filter((event) => event.kind === "claimed" && event.packet === "P01")).toHaveLength(2);
    const shown = bufferOutput();
    await status({ cwd: target.dir, id: "P01", json: false, output: shown });
    expect(shown.text()).toContain(`failure fingerprints: ${record?.fingerprints.join(", ")}`);
  });
});
