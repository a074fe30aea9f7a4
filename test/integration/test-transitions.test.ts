import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GateConfig, Surface } from "../../src/config/types.js";
import { judgeTests, runCommandGate } from "../../src/gates/command.js";
import type { TestResult } from "../../src/gates/junit.js";
import { hasFailingPlantedCase, plantedCases } from "../../src/gates/test-compare.js";
import { AFTER, type Role, type Standing, TRANSITIONS, type Verdict } from "../../src/gates/transitions.js";
import type { GateReport } from "../../src/gates/types.js";
import { hiddenCases, judgeHoldout } from "../../src/guards/holdout.js";
import { baselineProblem } from "../../src/loop/baseline.js";
import { pytestAvailable } from "../helpers/python-queue.js";

/**
 * Issue 38 §1: every cell of the transition table (src/gates/transitions.ts) through real pytest and the
 * factory's own judging code. Each cell is one test module, tests/test_cN.py, whose case `test_case`
 * stands as the module src/cN.py says (STATE); the module's other case is `test_other` (passes throughout:
 * a team's file) or `test_anchor` (fails before the work, passes after: a planted or hidden file). Three
 * trees are run through the factory's tests gate: the tip (the baseline), the tree right after planting, and
 * the candidate. pytest stops a whole run at a file it cannot collect, so such a file runs on its own (with
 * the rest of the suite, tests/test_rest.py); the others run together, and each cell's verdict is judged on
 * its own module's results and the rest's, with the exit pytest gives when a case fails.
 */
const available = pytestAvailable("the transition table's cells");

interface Cell {
  n: number;
  role: Role;
  before: Standing;
  after: Standing;
  expected: Verdict;
  /** The anchor passes before the work too: the planted or hidden file cannot tell right from wrong. */
  allPassBefore?: boolean;
}

const cells: Cell[] = [];
for (const [role, table] of Object.entries(TRANSITIONS) as [Role, (typeof TRANSITIONS)[Role]][]) {
  for (const [before, verdicts] of Object.entries(table.rows) as [Standing, readonly Verdict[]][]) {
    for (const [index, expected] of verdicts.entries()) {
      if (expected !== "n/a") cells.push({ n: cells.length, role, before, after: AFTER[index] as Standing, expected });
    }
  }
}
// The packet-level rows: every case of the planted (or hidden) file passes before the work.
cells.push({ n: cells.length, role: "planted", before: "passed", after: "passed", expected: "defective", allPassBefore: true });
cells.push({ n: cells.length, role: "holdout", before: "passed", after: "passed", expected: "defective", allPassBefore: true });

type Stage = "baseline" | "planting" | "candidate";
const HAS_FILE: Record<Stage, (role: Role) => boolean> = {
  baseline: (role) => role === "existing" || role === "retired",
  planting: (role) => role === "planted" || role === "holdout",
  candidate: () => true,
};
const standingAt = (cell: Cell, stage: Stage): Standing => (stage === "candidate" ? cell.after : cell.before);
const anchored = (role: Role): boolean => role === "planted" || role === "holdout";

function testModule(cell: Cell): string {
  const other = anchored(cell.role) ? ["def test_anchor():", "    assert m.READY"] : ["def test_other():", "    pass"];
  return [
    "import pytest",
    `import c${cell.n} as m`,
    "",
    'if m.STATE == "uncollectable":',
    '    raise ImportError("what this test imports is not there yet")',
    'if m.STATE != "no-case":',
    "    @pytest.fixture",
    "    def ready():",
    '        if m.STATE == "errored":',
    '            raise RuntimeError("the fixture broke")',
    "",
    '    if m.STATE != "absent":',
    '        @pytest.mark.skipif(m.STATE == "skipped", reason="not on this machine")',
    '        @pytest.mark.xfail(m.STATE == "xfailed", reason="known", strict=True)',
    "        def test_case(ready):",
    '            assert m.STATE == "passed"',
    "",
    ...other.map((line) => `    ${line}`),
    "",
  ].join("\n");
}

const GATE: GateConfig = {
  name: "pytest",
  run: "python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors --junitxml={junit} {tests}",
  tests: true,
  files: undefined,
  fix: undefined,
  timeoutMs: undefined,
};
const SURFACE: Surface = { name: "py", dir: ".", install: undefined, gates: [GATE], network: false };
const REST = "tests/test_rest.py";

interface Run {
  results: TestResult[];
  exitCode: number;
}

const made: string[] = [];
const runs = new Map<Stage, Map<number, Run>>();

async function runGate(tree: string, files: string[], name: string, together: boolean): Promise<{ results: TestResult[]; exitCode: number }> {
  const ran = await runCommandGate({
    gate: { ...GATE, run: together ? GATE.run : GATE.run.replace(" --continue-on-collection-errors", "") },
    surface: SURFACE,
    worktree: tree,
    changed: [],
    runDir: join(tree, "..", `run-${name}`),
    timeoutMs: 120_000,
    baseline: undefined,
    tests: files,
  });
  if (!ran.results || ran.exitCode === undefined) throw new Error(`${name}: the gate did not run: ${ran.report.summary}`);
  return { results: ran.results, exitCode: ran.exitCode };
}

const moduleOf = (cell: Cell): string => `tests.test_c${cell.n}`;
const ofCell = (cell: Cell, results: readonly TestResult[]): TestResult[] =>
  results.filter((result) => result.id === moduleOf(cell) || result.id.startsWith(`${moduleOf(cell)}::`) || result.id.startsWith("tests.test_rest::"));

/** One stage's tree, run: the cells that pytest can collect together, then each one it cannot on its own (with the rest). */
async function runStage(stage: Stage): Promise<Map<number, Run>> {
  const root = mkdtempSync(join(tmpdir(), `factory-transitions-${stage}-`));
  made.push(root);
  const tree = join(root, "tree");
  mkdirSync(join(tree, "src"), { recursive: true });
  mkdirSync(join(tree, "tests"));
  writeFileSync(join(tree, "pytest.ini"), "[pytest]\npythonpath = src\n");
  writeFileSync(join(tree, REST), "def test_rest():\n    pass\n");
  const present = cells.filter((cell) => HAS_FILE[stage](cell.role));
  for (const cell of cells) {
    const ready = stage === "candidate" || cell.allPassBefore === true;
    writeFileSync(join(tree, "src", `c${cell.n}.py`), `STATE = ${JSON.stringify(standingAt(cell, stage))}\nREADY = ${ready ? "True" : "False"}\n`);
  }
  for (const cell of present) writeFileSync(join(tree, "tests", `test_c${cell.n}.py`), testModule(cell));
  const alone = present.filter((cell) => standingAt(cell, stage) === "uncollectable");
  const together = present.filter((cell) => !alone.includes(cell));
  const out = new Map<number, Run>();
  const batch = await runGate(tree, [REST, ...together.map((cell) => `tests/test_c${cell.n}.py`)], `${stage}-together`, true);
  for (const cell of cells.filter((candidate) => !alone.includes(candidate))) {
    const results = ofCell(cell, batch.results);
    out.set(cell.n, { results, exitCode: results.some((result) => result.outcome === "failed") ? 1 : 0 });
  }
  for (const cell of alone) {
    const run = await runGate(tree, [REST, `tests/test_c${cell.n}.py`], `${stage}-c${cell.n}`, false);
    out.set(cell.n, { results: ofCell(cell, run.results), exitCode: run.exitCode });
  }
  return out;
}

function classify(report: GateReport): Verdict {
  if (report.status !== "pass") return "FAIL";
  if (report.summary.includes("already failing at the baseline")) return "not blamed";
  if (report.summary.includes("not checked on this machine")) return "not checked";
  return "pass";
}

/** The factory's verdict on one cell, from its own judging code on the runs. */
function judge(cell: Cell): Verdict {
  const at = (stage: Stage): Run => runs.get(stage)?.get(cell.n) as Run;
  const base = at("baseline");
  const now = at("candidate");
  const gate = { name: "pytest", command: GATE.run, durationMs: 0 };
  const file = `tests/test_c${cell.n}.py`;
  if (cell.role === "holdout") {
    const before = judgeHoldout(hiddenCases(at("planting").results, [file], "."), 1, ["I1"]);
    if (before.ran === 0 || before.failed === 0) return "defective";
    const after = judgeHoldout(hiddenCases(now.results, [file], "."), 1, ["I1"]);
    return after.status === "pass" ? "pass" : "FAIL";
  }
  if (baselineProblem({ results: base.results, exitCode: base.exitCode, tail: undefined })) return "refused";
  const judged = { base: gate, exitCode: now.exitCode, results: now.results, baseline: base.results, surfaceDir: "." };
  if (cell.role === "planted") {
    const planted = plantedCases({ files: [file], surfaceDir: ".", baseline: base.results, now: at("planting").results });
    if (planted.files.length === 0 || !hasFailingPlantedCase(planted.counts)) return "defective";
    return classify(judgeTests({ ...judged, planted }));
  }
  return classify(judgeTests({ ...judged, planted: undefined, takenAway: cell.role === "retired" ? [`${file}::test_case`] : [] }));
}

describe.skipIf(!available)("every transition a test can make, through real pytest", () => {
  beforeAll(async () => {
    for (const stage of ["baseline", "planting", "candidate"] as const) runs.set(stage, await runStage(stage));
  }, 300_000);
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("the standings are what the runner really reports", () => {
    // Each standing of the table is produced for real: a cell of the existing role shows it at the tip.
    const seen = (standing: Standing): TestResult[] => {
      const cell = cells.find((candidate) => candidate.role === "existing" && candidate.before === standing) as Cell;
      return (runs.get("baseline")?.get(cell.n)?.results ?? []).filter((result) => !result.id.startsWith("tests.test_rest::"));
    };
    expect(seen("passed").find((result) => result.id.endsWith("::test_case"))?.outcome).toBe("passed");
    expect(seen("failed").find((result) => result.id.endsWith("::test_case"))?.outcome).toBe("failed");
    expect(seen("errored").find((result) => result.id.endsWith("::test_case"))?.outcome).toBe("failed");
    expect(seen("skipped").find((result) => result.id.endsWith("::test_case"))).toMatchObject({ outcome: "skipped", reason: "not on this machine" });
    expect(seen("xfailed").find((result) => result.id.endsWith("::test_case"))).toMatchObject({ outcome: "skipped", expectedFailure: true });
    expect(seen("uncollectable")).toEqual([expect.objectContaining({ outcome: "failed", collectionError: true })]);
    expect(seen("no-case")).toEqual([]);
  });

  it.each(cells.map((cell) => [`${cell.role}: ${cell.before} → ${cell.after}${cell.allPassBefore ? " (no case fails before the work)" : ""}`, cell] as const))("%s", (_name, cell) => {
    // An undefended cell is one the factory passes and should not: the table says so, and this pins that it still does.
    expect(judge(cell)).toBe(cell.expected === "undefended" ? "pass" : cell.expected);
  });
});
