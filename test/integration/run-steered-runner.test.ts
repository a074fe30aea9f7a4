import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

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

function pythonTarget(allowed: readonly string[]): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"\ngoal = "Add double"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ${JSON.stringify(allowed)}\nbrief = "Add pkg/double.py with double(n) = n * 2."\n[[invariants]]\nid = "doubles"\nassert = "double(n) == n * 2"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_double.py", "from pkg.double import double\n\n\ndef test_double():\n    assert double(21) == 42\n");
  repo.commit("queue");
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

  it("honest twin: a report that agrees with the runner is believed", async () => {
    const target = pythonTarget(["pkg/double.py"]);
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toContain("gate pytest: pass — 2/2 passed");
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
  });
});
