import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { PYTEST_GATE, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Planted tests judged per case (DESIGN §6), the way real commits plant them: a new version of an
 * existing test file that adds one case beside many passing ones, drops one, or only reformats.
 */
const available = pytestAvailable("the per-case planting tests");
const queue = usePythonQueue(afterEach);

const DOUBLE_PY = "def double(n):\n    return n * 2\n";
const EXISTING = Array.from({ length: 12 }, (_, n) => `def test_add_${n}():\n    assert add(${n}, 1) == ${n + 1}\n`).join("\n\n");
const TEST_CALC = `from pkg.calc import add\n\n\n${EXISTING}`;

/** The gate the targets get: the whole suite each time, or (with {tests}) the planted files alone in the planted check. */
let gate = PYTEST_GATE;

function pythonTarget(planted: string, extra = "", more: Record<string, string> = {}): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, {
    gate,
    config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n`,
    tests: { "tests/test_calc.py": TEST_CALC, "tests/test_other.py": "def test_old():\n    assert 1 + 1 == 2\n\n\ndef test_kept():\n    assert 2 + 2 == 4\n" },
  });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"\ngoal = "Add double"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/**", "tests/**"]\n${extra}brief = "Add double(n) = n * 2 to pkg/calc.py."\n[[invariants]]\nid = "doubles"\nassert = "double(n) == n * 2"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_calc.py", planted);
  for (const [path, text] of Object.entries(more)) repo.write(`packets/supplied/P01/${path}`, text);
  repo.commit("queue");
  return repo;
}

const HONEST = { P01: { implementer: [{ append: { "pkg/calc.py": `\n\n${DOUBLE_PY}` } }], reviewer: [{ evidence: "pkg/calc.py:5" }] } };
const DOUBLE_CASE = "\n\ndef test_double():\n    from pkg.calc import double\n    assert double(21) == 42\n";

describe.skipIf(!available).each([
  ["running the whole suite", PYTEST_GATE],
  ["running the planted files alone through {tests}", `${PYTEST_GATE} {tests}`],
])("planted tests judged per case, the gate %s", (_how, command) => {
  beforeEach(() => {
    gate = command;
  });

  it("a new case added to an existing file of passing cases is the planted case: the packet merges", async () => {
    const target = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`);
    const { code, out, record, events } = await queue.run(target, HONEST);
    expect(out).not.toContain("defective");
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
    const planted = events.find((event) => event.kind === "planted");
    expect(planted && "cases" in planted ? planted.cases?.pytest?.cases : undefined).toEqual(["tests.test_calc::test_double"]);
    // With {tests}, the planted check ran the planted file alone: the rest of the suite runs once, in the gates.
    const checked = readFileSync(join(target.dir, ".factory/runs/P01/attempt-1/planted-check/reports/junit-pytest.xml"), "utf8");
    expect(checked.includes("test_old")).toBe(!command.includes("{tests}"));
    expect(checked).toContain("test_double");
  });

  it("a case the planted version drops was removed by the packet's author: not a regression", async () => {
    const target = pythonTarget(`${TEST_CALC.replace(/def test_add_3\(\):\n.*\n/, "")}${DOUBLE_CASE}`);
    const { code, out, record } = await queue.run(target, HONEST);
    expect(out).not.toMatch(/regression/);
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });

  it("a test of another file listed in retired_tests may go: the agent removes it, no regression", async () => {
    const target = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`, 'retired_tests = ["tests/test_other.py::test_old"]\n');
    const retire = { write: { "tests/test_other.py": "def test_kept():\n    assert 2 + 2 == 4\n" }, append: { "pkg/calc.py": `\n\n${DOUBLE_PY}` } };
    const { code, out, record } = await queue.run(target, { P01: { implementer: [retire], reviewer: [{ evidence: "pkg/calc.py:5" }] } });
    expect(out).not.toMatch(/regression|deletes the test/);
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });

  it("a test file the packet lets the agent delete takes its tests with it: no tamper, no regression", async () => {
    const target = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`, 'deletable_paths = ["tests/test_other.py"]\n');
    const remove = { delete: ["tests/test_other.py"], append: { "pkg/calc.py": `\n\n${DOUBLE_PY}` } };
    const { code, out, record } = await queue.run(target, { P01: { implementer: [remove], reviewer: [{ evidence: "pkg/calc.py:5" }] } });
    expect(out).not.toMatch(/regression|deletes the test/);
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
    expect(target.git("ls-tree", "--name-only", "main", "tests/")).not.toContain("test_other.py");
  });

  it("removing a test that is not retired is still a regression (and tamper)", async () => {
    const target = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`);
    const remove = { write: { "tests/test_other.py": "def test_kept():\n    assert 2 + 2 == 4\n" }, append: { "pkg/calc.py": `\n\n${DOUBLE_PY}` } };
    const { code, out, record } = await queue.run(target, { P01: { implementer: [remove], reviewer: [{ evidence: "pkg/calc.py:5" }] } });
    expect(out).toMatch(/tests\.test_other::test_old.*passed at the baseline and is missing now|1 regression/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
  });

  it("a reformat-only planting (no case fails before the work) is defective, with the counts and the remedy", async () => {
    const target = pythonTarget(TEST_CALC.replaceAll("assert add(", "assert  add("));
    const { code, out, record } = await queue.run(target, HONEST);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(out).toContain("tests/test_calc.py: 12 cases, 0 new, none fails before the work: plant a test that fails without the change");
    expect(out).toContain("then edit packets/P01-double.toml or its planted files under packets/supplied/P01/ and commit");
  });

  it("a planted test the runner does not collect by its name is defective, whatever its name; declared as a support file it is not a test", async () => {
    const check = "def test_double_again():\n    from pkg.calc import double\n    assert double(2) == 4\n";
    const unnamed = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`, "", { "tests/check_double.py": check });
    const refused = await queue.run(unnamed, HONEST);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("planted test tests/check_double.py never ran");
    expect(refused.events.some((event) => event.kind === "agent-finished")).toBe(false);

    const declared = pythonTarget(`${TEST_CALC}${DOUBLE_CASE}`, 'support_files = ["tests/check_double.py"]\n', { "tests/check_double.py": check });
    const merged = await queue.run(declared, HONEST);
    expect(merged.code).toBe(0);
    expect(merged.record?.status.state).toBe("merged");
  });
});
