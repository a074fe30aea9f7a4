import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/** The Python side: pytest's JUnit report through the real pipeline, as `factory init`'s python preset configures it. */
const available = pytestAvailable("the pytest pipeline tests");
const queue = usePythonQueue(afterEach);

const DOUBLE_PY = "def double(n):\n    return n * 2\n";

function pythonTarget(): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  const spec = repo.commit("python project");
  queueDoublePacket(repo, spec);
  return repo;
}

const runQueue = queue.run;

describe.skipIf(!available)("factory run on a pytest project", () => {
  it("merges honest work; the planted test failed first and passes after", async () => {
    const target = pythonTarget();
    const { code, out, record } = await runQueue(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toContain("gate pytest: pass — 2/2 passed");
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
    expect(target.read("pkg/double.py")).toBe(DOUBLE_PY);
  });

  it("blames a regression of an existing test, per test, from pytest's JUnit report", async () => {
    const target = pythonTarget();
    target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace('allowed_paths = ["pkg/double.py"]', 'allowed_paths = ["pkg/double.py", "pkg/calc.py"]'));
    target.commit("widen scope");
    const { code, out, record } = await runQueue(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY, "pkg/calc.py": "def add(a, b):\n    return a - b\n" } }] } });
    expect(code).toBe(1);
    expect(out).toMatch(/gate pytest: fail — 1 regression\(s\) of 2/);
    expect(record?.status.state).toBe("blocked");
  });
});
