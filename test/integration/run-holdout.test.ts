import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { FORCE_PASS_PLUGIN, PYTEST_GATE, pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Issue 23.6: an implementer that special-cases the planted inputs passes everything the factory runs
 * that it can see. Hidden holdout tests, kept untracked under .factory/holdout/<ID>/, are run after the
 * gates and are never within the implementer's reach.
 */
const available = pytestAvailable("the holdout tests");
const queue = usePythonQueue(afterEach);
const MARKER = `HOLDOUT-MARKER-${process.pid}`;

const DOUBLE_PY = "def double(n):\n    return n * 2\n";
const SPECIAL_CASED = "def double(n):\n    return 42 if n == 21 else n + 1\n";
const HIDDEN = `# ${MARKER}\nfrom pkg.double import double\n\n\ndef test_double_other_inputs():\n    assert double(5) == 10\n    assert double(0) == 0\n`;

function pythonTarget(gate = PYTEST_GATE): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { gate, config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  repo.write(".gitignore", "__pycache__/\n.factory/holdout/\n");
  const spec = repo.commit("python project");
  queueDoublePacket(repo, spec);
  mkdirSync(join(repo.dir, ".factory/holdout/P01/tests"), { recursive: true });
  writeFileSync(join(repo.dir, ".factory/holdout/P01/tests/test_double_hidden.py"), HIDDEN);
  return repo;
}

describe.skipIf(!available)("hidden holdout tests", () => {
  it("refuse code special-cased to the planted input, and the implementer learns only that a hidden test failed", async () => {
    const target = pythonTarget();
    const { code, out, events, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": SPECIAL_CASED } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/gate holdout: fail — 2 of 2 hidden test case\(s\) of the packet failed|gate holdout: fail — 1 of 1 hidden test case\(s\) of the packet failed/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
    // Nothing of the hidden test (its name, its file, its content) is in what the factory recorded for anyone to read.
    const recorded = JSON.stringify(events);
    expect(recorded).not.toContain("test_double_other_inputs");
    expect(recorded).not.toContain("test_double_hidden");
    expect(recorded).not.toContain(MARKER);
  });

  it("are out of the implementer's reach: searching the checkout and every git object finds nothing; honest work merges without them", async () => {
    const target = pythonTarget();
    const search = [
      `git log --all -p`,
      `git rev-list --all --objects | cut -d' ' -f1 | git cat-file --batch`,
      `cat -v ${target.dir}/.factory/holdout/P01/tests/test_double_hidden.py`,
      `grep -r ${MARKER} ${target.dir}`,
    ].join("; ");
    const run = `echo "# found $( (${search}) 2>/dev/null | grep -c ${MARKER})" >> pkg/double.py`;
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY }, run }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/gate holdout: pass — 1 hidden test case\(s\) passed/);
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
    expect(target.read("pkg/double.py")).toContain("# found 0");
    expect(target.exists("tests/test_double_hidden.py")).toBe(false); // never landed
  });

  it("that already pass before any implementation make the packet defective, before the implementer is paid", async () => {
    const target = pythonTarget(`${PYTEST_GATE} {tests}`); // run alone: a planted file that does not load yet cannot stop them
    writeFileSync(join(target.dir, ".factory/holdout/P01/tests/test_double_hidden.py"), "from pkg.calc import add\n\n\ndef test_add_more():\n    assert add(1, 1) == 2\n");
    const { code, out, events } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }] } });
    expect(out).toContain("its hidden tests (.factory/holdout/P01/, 1 case(s)) all pass before any implementation, so they cannot tell right from wrong");
    expect(events.filter((event) => event.kind === "agent-finished")).toEqual([]);
    expect(code).toBe(1);
  });

  it("committed to the repository, are refused: the agent's git could read them", async () => {
    const target = pythonTarget();
    target.git("add", "-f", ".factory/holdout");
    target.commit("holdout, committed by mistake");
    const { code, out, events } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }] } });
    expect(out).toContain("its holdout files are committed (.factory/holdout/P01/tests/test_double_hidden.py)");
    expect(code).toBe(2); // refused as an input, before anything is claimed or spent
    expect(events.filter((event) => event.kind === "agent-finished")).toEqual([]);
  });

  it("cannot be steered by what the gates' own run of the code left behind: a conftest.py written into the tree", async () => {
    const target = pythonTarget();
    const { code, out, record } = await queue.run(target, {
      P01: { implementer: [{ write: { "pkg/double.py": `${PLANTS_CONFTEST}${SPECIAL_CASED}` } }], reviewer: [{ evidence: "pkg/double.py:2" }] },
    });
    expect(out).toMatch(/gate holdout: fail — 1 of 1 hidden test case\(s\) of the packet failed/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
  });

  it("cannot be steered by a plugin the gates' own run of the code planted in the installed dependencies (a .pth in the project's virtual environment): the change fails the gates", async () => {
    const target = pythonTarget();
    target.write(
      ".factory/config.toml",
      target
        .read(".factory/config.toml")
        .replace('dir = "."\n', `dir = "."\ninstall = "python3 -m venv --system-site-packages --without-pip .venv"\n`)
        .replace("python3 -m pytest", ".venv/bin/python -m pytest"),
    );
    target.write(".gitignore", "__pycache__/\n.factory/holdout/\n.venv/\n");
    target.commit("a virtual environment");
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": `${PLANTS_PLUGIN}${SPECIAL_CASED}` } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    // uv writes into .venv on every run, so the environment stays writable; what the gates' run changed in its packages fails them.
    expect(out).toMatch(/gate dependencies: fail — the code run by the gates changed the installed packages \(\.venv\/lib\/python[0-9.]+\/site-packages\/zz_steer\.(pth|py)\)/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
  });

  it("honest twin: a gate that writes into the virtual environment as uv run does (its lock, a temporary directory), and bytecode an import writes into its packages, merges", async () => {
    const target = pythonTarget();
    const install = "python3 -m venv --system-site-packages --without-pip .venv && for d in .venv/lib/python3*/site-packages; do printf 'FACTOR = 2\\\\n' > $d/helper_dep.py; done";
    const gate = "touch .venv/.lock && mkdir -p .venv/.tmp-run && .venv/bin/python -m pytest";
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."\n', `dir = "."\ninstall = "${install}"\n`).replace("python3 -m pytest", gate));
    target.write(".gitignore", "__pycache__/\n.factory/holdout/\n.venv/\n");
    target.commit("a virtual environment");
    const uses = "from helper_dep import FACTOR\n\n\ndef double(n):\n    return n * FACTOR\n";
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": uses } }], reviewer: [{ evidence: "pkg/double.py:5" }] } });
    expect(out).not.toContain("gate dependencies");
    expect(out).toMatch(/gate holdout: pass — 1 hidden test case\(s\) passed/);
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
  });

  it("honest twin: a file a build gate made before the tests stays for every tests run, the hidden ones included", async () => {
    const target = pythonTarget();
    const config = target
      .read(".factory/config.toml")
      .replace("  [[surfaces.py.gates]]\n", `  [[surfaces.py.gates]]\n  name = "build"\n  run = "printf 'FACTOR = 2\\\\n' > pkg/generated.py"\n  [[surfaces.py.gates]]\n`);
    target.write(".factory/config.toml", config);
    target.write(".gitignore", "__pycache__/\n.factory/holdout/\npkg/generated.py\n");
    target.commit("a generated module");
    writeFileSync(join(target.dir, ".factory/holdout/P01/tests/test_double_hidden.py"), `${HIDDEN}\n\ndef test_generated():\n    from pkg.generated import FACTOR\n    assert double(1) == FACTOR\n`);
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/gate holdout: pass — 2 hidden test case\(s\) passed/);
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
  });
});

/** Code under test that, when the gates' run imports it, leaves a conftest.py in the tree for the runs after it. */
const PLANTS_CONFTEST = `import os

try:
    with open(os.path.join(os.getcwd(), "conftest.py"), "w") as planted:
        planted.write(${JSON.stringify(FORCE_PASS_PLUGIN)})
except OSError:
    pass

`;

/** Code under test that, when the gates' run imports it, adds a pytest plugin to the virtual environment it runs in. */
const PLANTS_PLUGIN = `import os
import sysconfig

try:
    site = sysconfig.get_paths()["purelib"]
    with open(os.path.join(site, "zz_steer.py"), "w") as planted:
        planted.write(${JSON.stringify(FORCE_PASS_PLUGIN)})
    with open(os.path.join(site, "zz_steer.pth"), "w") as planted:
        planted.write("import os; os.environ.setdefault('PYTEST_PLUGINS', 'zz_steer')\\n")
except OSError:
    pass

`;
