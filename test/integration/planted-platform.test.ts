import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { PYTEST_GATE, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Planted tests this machine does not run, through real pytest: a case the
 * team's file skips here (a macOS-only test on Linux), or a new version of a
 * file whose tests are defined only on another platform. Found in the replay
 * of gyp-next's published history, where both made honest upstream steps
 * block. A case skipped before the work and still skipped for the same
 * reason after it is said and left out; a skip for another reason, or a
 * failure, is the work's; a new file that yields no case still never ran.
 */
const available = pytestAvailable("the planted-platform tests");
const queue = usePythonQueue(afterEach);

const DOUBLE = "def test_double():\n    from pkg.double import double\n\n    assert double(21) == 42\n";
const MAC_ONLY = `import sys
import unittest


class TestMac(unittest.TestCase):
    def setUp(self):
        if sys.platform != "plan9":
            self.skipTest("This test only runs on macOS")

    def test_flags(self):
        assert False
`;
/** Skipped while pkg.fast cannot be imported: a wrong pkg/fast.py that fails to import skips it for another reason. */
const FAST = `import pytest


def test_fast():
    fast = pytest.importorskip("pkg.fast")
    assert fast.double(2) == 4
`;
const NO_CASES_HERE = 'import sys\n\nif sys.platform == "plan9":\n\n    def test_plan9():\n        assert True\n';

function target(planted: Record<string, string>, tip: Record<string, string> = {}): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, {
    gate: PYTEST_GATE,
    config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n`,
    tests: { "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n", ...tip },
  });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"\ngoal = "Add double"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/**"]\nbrief = "Add pkg/double.py and pkg/fast.py with double(n) = n * 2."\n[[invariants]]\nid = "doubles"\nassert = "double(n) == n * 2"\n`,
  );
  for (const [path, text] of Object.entries(planted)) repo.write(`packets/supplied/P01/${path}`, text);
  repo.commit("queue");
  return repo;
}

const work = (fast: string) => ({ P01: { implementer: [{ write: { "pkg/double.py": "def double(n):\n    return n * 2\n", "pkg/fast.py": fast } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
const HONEST = work("def double(n):\n    return n * 2\n");

describe.skipIf(!available)("planted tests this machine does not run", () => {
  it("a case skipped here before and after the work, for the same reason, is said and left out: honest work merges", async () => {
    const repo = target({ "tests/test_double.py": DOUBLE, "tests/test_mac.py": MAC_ONLY });
    const { code, out, record } = await queue.run(repo, HONEST);
    expect(code, out).toBe(0);
    expect(record?.status.state).toBe("merged");
    expect(out).toContain("1 planted case(s) skipped here before and after the work, not checked on this machine (This test only runs on macOS)");
  });

  it("a case skipped before the work and skipped for another reason after it is the work's: blocked", async () => {
    const repo = target({ "tests/test_double.py": DOUBLE, "tests/test_fast.py": FAST });
    const { code, out, record, events } = await queue.run(repo, work('raise ImportError("the native build failed")\n'));
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(out).toContain("gate pytest: fail — 1 planted test(s) not passing of 3");
    const decided = events.find((event) => event.kind === "decided");
    expect(decided?.kind === "decided" && decided.feedback?.[0]).toContain("tests/test_fast.py: no test of this planted file passes");
    // Honest work runs the case, and it passes.
    const honest = target({ "tests/test_double.py": DOUBLE, "tests/test_fast.py": FAST });
    const merged = await queue.run(honest, HONEST);
    expect(merged.code, merged.out).toBe(0);
    expect(merged.out).not.toContain("skipped here");
  });

  it("a new version of a test file that yields no case here, as the tip's did not, is said and left out; a new file that yields none never ran", async () => {
    const repo = target({ "tests/test_double.py": DOUBLE, "tests/test_plan9.py": `${NO_CASES_HERE}\n# reformatted\n` }, { "tests/test_plan9.py": NO_CASES_HERE });
    const { code, out, record } = await queue.run(repo, HONEST);
    expect(code, out).toBe(0);
    expect(record?.status.state).toBe("merged");
    expect(out).toContain("planted test tests/test_plan9.py yields no test case on this machine, as the tip's version did not: its tests are not checked here");

    const fresh = target({ "tests/test_double.py": DOUBLE, "tests/test_plan9.py": NO_CASES_HERE });
    const refused = await queue.run(fresh, HONEST);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("planted test tests/test_plan9.py never ran");
  });
});
