import { mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { FORCE_PASS_PLUGIN, pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Issue 23.2: the test run must not be steerable from inside the candidate tree. Each case is an
 * implementer that writes wrong code (double(21) is 22) and then tries to make pytest's verdict say
 * otherwise; each has an honest twin that still merges.
 */
const available = pytestAvailable("the steered-runner tests");
const queue = usePythonQueue(afterEach);

const DOUBLE_PY = "def double(n):\n    return n * 2\n";
const WRONG_PY = "def double(n):\n    return n + 1\n";

/** Code under test that rewrites pytest's JUnit file after pytest wrote it, to show no failure, and exits 0. */
const FORGER_PY = `import atexit, os, re, sys


def _forge():
    for arg in sys.argv:
        if arg.startswith("--junitxml="):
            path = arg.split("=", 1)[1]
            with open(path) as f:
                text = f.read()
            text = re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=re.S)
            text = re.sub(r'failures="\\\\d+"', 'failures="0"', text)
            with open(path, "w") as f:
                f.write(text)
    os._exit(0)


atexit.register(_forge)


${WRONG_PY}`;

function pythonTarget(allowed: readonly string[], options: { srcLayout?: boolean } = {}): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  if (options.srcLayout) {
    mkdirSync(join(repo.dir, "src"));
    renameSync(join(repo.dir, "pkg"), join(repo.dir, "src/pkg"));
    rmSync(join(repo.dir, "tests/__init__.py"));
    repo.write(".factory/config.toml", repo.read(".factory/config.toml").replace('run = "python3', 'run = "PYTHONPATH=src python3'));
  }
  const spec = repo.commit("python project");
  queueDoublePacket(repo, spec, allowed);
  return repo;
}

describe.skipIf(!available)("a pytest run the candidate cannot steer", () => {
  it("does not believe a JUnit report rewritten by the code under test: the runner printed a failure", async () => {
    const target = pythonTarget(["pkg/double.py"]);
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": FORGER_PY } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/its report and its own summary disagree: the report shows 0 failing of \d+, the runner printed "1 failed, 1 passed in/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
    expect(target.exists("pkg/double.py")).toBe(false);
  });

  it("refuses a pytest plugin loaded through a committed *.dist-info entry point, with allowed_paths = ['**']", async () => {
    const target = pythonTarget(["**"]);
    const entryPoint = { "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n", "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evil_plugin\n" };
    const write = { "pkg/double.py": WRONG_PY, "evil_plugin.py": FORCE_PASS_PLUGIN, ...entryPoint };
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/gate tamper: fail — evil-1\.0\.dist-info\/\w+:1: adds or edits a Python start-up hook or plugin entry point/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
  });

  it("refuses a new pytest.toml that loads a plugin through addopts; a pytest.toml the packet names is the team's and merges", async () => {
    const steered = pythonTarget(["**"]);
    const evil = { "pkg/double.py": WRONG_PY, "evil_plugin.py": FORCE_PASS_PLUGIN, "pytest.toml": '[pytest]\naddopts = ["-p", "evil_plugin"]\n' };
    const refused = await queue.run(steered, { P01: { implementer: [{ write: evil }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(refused.out).toContain("gate tamper: fail — pytest.toml:1: edits test-runner configuration not named in the packet's allowed_paths");
    expect(refused.record?.status.state).toBe("blocked");
    const honest = pythonTarget(["pkg/double.py", "pytest.toml"]);
    const write = { "pkg/double.py": DOUBLE_PY, "pytest.toml": '[pytest]\naddopts = ["-ra"]\n' };
    const merged = await queue.run(honest, { P01: { implementer: [{ write }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(merged.out).toContain("gate pytest: pass — 2/2 passed");
    expect(merged.record?.status.state).toBe("merged");
  });

  it("refuses a module that shadows the code under test from the test directory, which pytest puts first on its path", async () => {
    // A src layout whose tests/ is no package: pytest inserts tests/ at the front of sys.path, so tests/pkg/ is imported for pkg.
    const target = pythonTarget(["**"], { srcLayout: true });
    const write = { "src/pkg/double.py": WRONG_PY, "tests/pkg/__init__.py": "", "tests/pkg/double.py": DOUBLE_PY };
    const { out, record } = await queue.run(target, { P01: { implementer: [{ write }], reviewer: [{ evidence: "src/pkg/double.py:2" }] } });
    expect(out).toMatch(/gate tamper: fail — tests\/pkg\/(__init__|double)\.py: shadows the project's module "pkg" \(imported from src\/\)/);
    expect(record?.status.state).toBe("blocked");
  });

  it("honest twin: a new module of the project's own in that layout merges", async () => {
    const target = pythonTarget(["src/pkg/double.py"], { srcLayout: true });
    const { out, record } = await queue.run(target, { P01: { implementer: [{ write: { "src/pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "src/pkg/double.py:2" }] } });
    expect(out).toContain("gate tamper: pass");
    expect(record?.status.state).toBe("merged");
  });

  it("refuses an existing test weakened in ways lines cannot show: an assert moved under an if, or made a tuple", async () => {
    for (const weakened of [
      "from pkg.calc import add\n\n\ndef test_add():\n    if add(2, 2) == 5:\n        return\n    assert add(2, 2) == 4\n",
      'from pkg.calc import add\n\n\ndef test_add():\n    assert (add(2, 2) == 4, "adds")\n',
    ]) {
      const target = pythonTarget(["pkg/double.py", "pkg/calc.py", "tests/test_calc.py"]);
      // Wrong code in add, and its test made unable to see it.
      const write = { "pkg/double.py": DOUBLE_PY, "pkg/calc.py": "def add(a, b):\n    return a * b + 1\n", "tests/test_calc.py": weakened };
      const { out, record } = await queue.run(target, { P01: { implementer: [{ write }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
      expect(out).toMatch(/gate tamper: fail — tests\/test_calc\.py:\d+: (makes an assertion of "test_add" a tuple|"test_add" has fewer assertions that always run)/);
      expect(record?.status.state).toBe("blocked");
    }
  });

  it("refuses a team's test file replaced by a symbolic link to a weaker test kept outside the tests, with allowed_paths = ['**']", async () => {
    const target = pythonTarget(["**"]);
    const run = "rm tests/test_calc.py && mkdir -p pkg/checks && printf 'def test_add():\\n    assert 1 == 1\\n' > pkg/checks/calc_check.py && ln -s ../pkg/checks/calc_check.py tests/test_calc.py";
    const write = { "pkg/double.py": DOUBLE_PY, "pkg/calc.py": "def add(a, b):\n    return 0\n" };
    const { out, record } = await queue.run(target, { P01: { implementer: [{ write, run }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toContain("gate tamper: fail — tests/test_calc.py: makes a symbolic link where tests are read (to ../pkg/checks/calc_check.py)");
    expect(record?.status.state).toBe("blocked");
  });

  it("honest twin: a symbolic link away from the tests, and one the packet names, merge", async () => {
    const target = pythonTarget(["pkg/double.py", "docs/**", "tests/fixtures/calc.py"]);
    const run = "mkdir -p docs tests/fixtures && ln -s ../pkg/double.py docs/double.py && ln -s ../../pkg/calc.py tests/fixtures/calc.py";
    const { out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY }, run }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toContain("gate tamper: pass");
    expect(record?.status.state).toBe("merged");
  });

  it("honest twin: a test of the team's reformatted and given a second assertion merges", async () => {
    const target = pythonTarget(["pkg/double.py", "tests/test_calc.py"]);
    const restructured = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(\n        2, 2\n    ) == 4\n    for n in range(3):\n        assert add(n, 0) == n\n";
    const { out, record } = await queue.run(target, {
      P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY, "tests/test_calc.py": restructured } }], reviewer: [{ evidence: "pkg/double.py:2" }] },
    });
    expect(out).toContain("gate tamper: pass");
    expect(record?.status.state).toBe("merged");
  });

  it("honest twin: a report that agrees with the runner is believed", async () => {
    const target = pythonTarget(["pkg/double.py"]);
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toContain("gate pytest: pass — 2/2 passed");
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
  });
});
