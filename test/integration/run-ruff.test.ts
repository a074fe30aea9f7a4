import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderSurface } from "../../src/config/presets.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";
import { ruffBin } from "../helpers/ruff.js";

/**
 * The ruff gates `factory init` writes for a project that configures ruff, run for real: ruff's own
 * checker and formatter (WebAssembly, from npm) behind a `ruff` command first on PATH.
 */
const ruff = ruffBin();
if ("missing" in ruff) console.warn(`skipping the ruff gate tests: ${ruff.missing}`);
const available = pytestAvailable("the ruff gate tests") && "dir" in ruff;
const queue = usePythonQueue(afterEach);
const savedPath = process.env.PATH;
beforeAll(() => {
  if ("dir" in ruff) process.env.PATH = `${ruff.dir}:${savedPath}`;
});
afterAll(() => {
  process.env.PATH = savedPath;
});

const DOUBLE_PY = "def double(n):\n    return n * 2\n";

/** A Python project with `[tool.ruff]`, its surface exactly as `factory init` renders it (ruff gates, then pytest). */
function ruffProject(calc?: string): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { config: "" });
  if (calc) repo.write("pkg/calc.py", calc);
  repo.write("pyproject.toml", `[project]\nname = "pkg"\nversion = "0.1.0"\n\n[tool.ruff]\nline-length = 100\n`);
  repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n.ruff_cache/\n");
  repo.write(".factory/config.toml", `${renderSurface({ name: "py", dir: ".", kind: "python", ruff: true, install: "" })}\n${queue.agentConfig}[limits]\nmax_attempts = 1\n`);
  const spec = repo.commit("python project with ruff");
  queueDoublePacket(repo, spec, ["pkg/double.py", "pkg/calc.py"]);
  return repo;
}

describe.skipIf(!available)("ruff gates, run for real", () => {
  it("an unformatted change is repaired by the format gate's fix, committed on its own, without spending an attempt", async () => {
    const target = ruffProject();
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": "def double( n ):\n  return n*2\n" } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/P01#1 auto-fix ruff-format: committed [0-9a-f]{10}/);
    expect(out).toMatch(/gate ruff-format: pass/);
    expect(out).toMatch(/gate ruff: pass/);
    expect(record?.status.state).toBe("merged");
    expect(record?.lastAttempt).toBe(1);
    expect(code).toBe(0);
    expect(target.read("pkg/double.py")).toBe(DOUBLE_PY);
  });

  it("a lint finding in the agent's own lines fails the packet", async () => {
    const target = ruffProject();
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": `import os\n\n\n${DOUBLE_PY}` } }], reviewer: [{ evidence: "pkg/double.py:5" }] } });
    expect(out).toMatch(/gate ruff: fail/);
    expect(out).toMatch(/gate ruff: fail — 1 new finding\(s\) in the changed files: pkg\/double\.py:1:8: F401 `os` imported but unused/);
    expect(record?.status.state).toBe("blocked");
    expect(code).toBe(1);
  });

  it("a finding that was already at the tip, in a file the agent edits, does not fail it", async () => {
    const calc = "import sys\n\n\ndef add(a, b):\n    return a + b\n";
    const target = ruffProject(calc);
    const edited = `${calc}\n\ndef sub(a, b):\n    return a - b\n`;
    const { code, out, record } = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY, "pkg/calc.py": edited } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(out).toMatch(/gate ruff: pass/);
    expect(record?.status.state).toBe("merged");
    expect(code).toBe(0);
    expect(target.read("pkg/calc.py")).toBe(edited);
  });
});
