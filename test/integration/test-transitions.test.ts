import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testGate } from "../../src/config/presets.js";
import type { GateConfig, Surface } from "../../src/config/types.js";
import { judgeTests, runCommandGate } from "../../src/gates/command.js";
import type { TestResult } from "../../src/gates/junit.js";
import { hasFailingPlantedCase, plantedCases } from "../../src/gates/test-compare.js";
import { AFTER, type Role, type Runner, type Standing, TRANSITIONS, transitionVerdict, type Verdict } from "../../src/gates/transitions.js";
import type { GateReport } from "../../src/gates/types.js";
import { hiddenCases, judgeHoldout } from "../../src/guards/holdout.js";
import { baselineProblem } from "../../src/loop/baseline.js";
import { publishedTools } from "../helpers/published.js";
import { pytestAvailable } from "../helpers/python-queue.js";

/**
 * Issue 38 §1: every cell of the transition table (src/gates/transitions.ts) through a real runner (pytest,
 * node:test) and the factory's own judging code. Each cell is one test file whose case "case" stands as
 * the cell's source module says (STATE); the file's other case passes throughout (a team's file) or is an
 * anchor that fails before the work and passes after (a planted or hidden file: READY). Three trees are
 * run through the factory's tests gate: the tip (the baseline), the tree right after planting, and the
 * candidate. pytest stops a whole run at a file it cannot collect, so such a file runs on its own with the
 * rest of the suite; the others run together, and each cell is judged on its own file's results and the
 * rest's, with the exit the runner gives when a case fails.
 */
const available = pytestAvailable("the transition table's cells");

interface Cell {
  n: number;
  role: Role;
  before: Standing;
  after: Standing;
  /** The anchor passes before the work too: the planted or hidden file cannot tell right from wrong. */
  allPassBefore?: boolean;
}

const cells: Cell[] = [];
for (const [role, table] of Object.entries(TRANSITIONS) as [Role, (typeof TRANSITIONS)[Role]][]) {
  for (const [before, verdicts] of Object.entries(table.rows) as [Standing, readonly Verdict[]][]) {
    for (const [index, verdict] of verdicts.entries()) if (verdict !== "n/a") cells.push({ n: cells.length, role, before, after: AFTER[index] as Standing });
  }
}
// The packet-level rows: every case of the planted (or hidden) file passes before the work.
cells.push({ n: cells.length, role: "planted", before: "passed", after: "passed", allPassBefore: true });
cells.push({ n: cells.length, role: "holdout", before: "passed", after: "passed", allPassBefore: true });
const expectedOf = (runner: Runner, cell: Cell): Verdict => (cell.allPassBefore ? "defective" : (transitionVerdict(cell.role, cell.before, cell.after, runner) as Verdict));

type Stage = "baseline" | "planting" | "candidate";
const HAS_FILE: Record<Stage, (role: Role) => boolean> = {
  baseline: (role) => role === "existing" || role === "retired",
  planting: (role) => role === "planted" || role === "holdout",
  candidate: () => true,
};
const standingAt = (cell: Cell, stage: Stage): Standing => (stage === "candidate" ? cell.after : cell.before);
const anchored = (role: Role): boolean => role === "planted" || role === "holdout";

interface RunnerKit {
  name: Runner;
  /** The gate; `{tests}` names the files to run. */
  run: string;
  /** What turns off running past a file it cannot collect, for a file run on its own; undefined: the runner never stops there. */
  together?: string;
  /** The runner names only one file that cannot load in a run (mocha 12 in parallel mode: the others count in its exit code alone): each runs on its own. */
  namesOneUnloadable?: true;
  files: Record<string, string>;
  rest: string;
  source: (cell: Cell, state: Standing, ready: boolean) => [string, string];
  testFile: (cell: Cell) => string;
  testModule: (cell: Cell) => string;
  ofCell: (cell: Cell, result: TestResult) => boolean;
  isRest: (result: TestResult) => boolean;
  /** The id a retired_tests entry names the cell's case by. */
  retired: (cell: Cell) => string;
  /** The cell's case in a report. */
  isCase: (result: TestResult) => boolean;
  /** Puts what the runner needs into a tree (its own install). */
  prepare?: (tree: string) => void;
  /** How the runner reports the standings it has no report field for (pytest's are the default). */
  shows?: Partial<Record<"skipped" | "xfailed" | "no-case", (results: TestResult[]) => void>>;
}

const PYTEST: RunnerKit = {
  name: "pytest",
  run: "python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors --junitxml={junit} {tests}",
  together: " --continue-on-collection-errors",
  files: { "pytest.ini": "[pytest]\npythonpath = src\n", "tests/test_rest.py": "def test_rest():\n    pass\n" },
  rest: "tests/test_rest.py",
  source: (cell, state, ready) => [`src/c${cell.n}.py`, `STATE = ${JSON.stringify(state)}\nREADY = ${ready ? "True" : "False"}\n`],
  testFile: (cell) => `tests/test_c${cell.n}.py`,
  testModule: (cell) =>
    [
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
      ...(anchored(cell.role) ? ["    def test_anchor():", "        assert m.READY"] : ["    def test_other():", "        pass"]),
      "",
    ].join("\n"),
  ofCell: (cell, result) => result.id === `tests.test_c${cell.n}` || result.id.startsWith(`tests.test_c${cell.n}::`),
  isRest: (result) => result.id.startsWith("tests.test_rest::"),
  retired: (cell) => `tests/test_c${cell.n}.py::test_case`,
  isCase: (result) => result.id.endsWith("::test_case"),
};

/**
 * A JavaScript cell's test module: what it imports, then the shape every JS runner shares. `caseOpen` is the
 * line that starts the cell's case (its runner's skip and expected-failure forms), `caseBody` its lines, and
 * `anchor`/`other` the file's second case (failing before the work for a planted or hidden file).
 */
function jsTestModule(input: { head: readonly string[]; caseOpen: string; caseBody: readonly string[]; anchor: string; other: string }, cell: Cell): string {
  return [
    ...input.head,
    "",
    'if (STATE === "uncollectable") throw new Error("what this test imports is not there yet");',
    'if (STATE !== "no-case") {',
    '  if (STATE !== "absent") {',
    `    ${input.caseOpen}`,
    ...input.caseBody.map((line) => `      ${line}`),
    "    });",
    "  }",
    `  ${anchored(cell.role) ? input.anchor : input.other}`,
    "}",
    "",
  ].join("\n");
}

/** node:test names no files in its report: every case's name carries its cell (`c7 case`), and a file that fails to load is reported by its path. */
const NODE_TEST: RunnerKit = {
  name: "node:test",
  run: "node --test --test-reporter=junit --test-reporter-destination={junit} --test-reporter=tap --test-reporter-destination=stdout {tests}",
  files: { "package.json": '{ "type": "module" }\n', "tests/rest.test.js": 'import { test } from "node:test";\ntest("rest", () => {});\n' },
  rest: "tests/rest.test.js",
  source: (cell, state, ready) => [`src/c${cell.n}.js`, `export const STATE = ${JSON.stringify(state)};\nexport const READY = ${ready};\n`],
  testFile: (cell) => `tests/c${cell.n}.test.js`,
  testModule: (cell) =>
    jsTestModule(
      {
        head: ['import { test } from "node:test";', 'import assert from "node:assert/strict";', `import { READY, STATE } from "../src/c${cell.n}.js";`],
        caseOpen: `test("c${cell.n} case", { skip: STATE === "skipped" ? "not on this machine" : false, todo: STATE === "xfailed" ? "known" : false }, () => {`,
        caseBody: ['if (STATE === "errored") throw new TypeError("the setup broke");', 'assert.equal(STATE, "passed");'],
        anchor: `test("c${cell.n} anchor", () => assert.ok(READY));`,
        other: `test("c${cell.n} other", () => {});`,
      },
      cell,
    ),
  ofCell: (cell, result) => result.id.startsWith(`test::c${cell.n} `) || result.id === `test::tests/c${cell.n}.test.js`,
  isRest: (result) => result.id === "test::rest",
  retired: (cell) => `test::c${cell.n} case`,
  isCase: (result) => result.id.endsWith(" case"),
};

const VITEST = fileURLToPath(new URL("../../node_modules/.bin/vitest", import.meta.url));
const OUR_MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));
/** vitest takes its file arguments as filters on the path: a cell's file name is never part of another's. */
const padded = (cell: Cell): string => String(cell.n).padStart(3, "0");

/**
 * vitest (the project's own install, linked into each tree). Its standings: a fixture that throws fails the case;
 * `test.skipIf` gives no reason; `test.fails` (vitest's expected failure) is reported as passed; a file that
 * fails to load, or holds no test at all, is one failing entry named by its path.
 */
const VITEST_KIT: RunnerKit = {
  name: "vitest",
  run: `${VITEST} run --config vitest.config.mjs --reporter=junit --outputFile.junit={junit} {tests}`,
  files: {
    "package.json": '{ "type": "module" }\n',
    "vitest.config.mjs": 'export default { cacheDir: ".vite", test: { include: ["tests/**/*.test.js"] } };\n',
    "tests/rest.test.js": 'import { test } from "vitest";\ntest("rest", () => {});\n',
  },
  rest: "tests/rest.test.js",
  prepare: (tree) => symlinkSync(OUR_MODULES, join(tree, "node_modules")),
  source: (cell, state, ready) => [`src/c${padded(cell)}.js`, `export const STATE = ${JSON.stringify(state)};\nexport const READY = ${ready};\n`],
  testFile: (cell) => `tests/c${padded(cell)}.test.js`,
  testModule: (cell) =>
    jsTestModule(
      {
        // A fixture of vitest's own that throws: the case errors outside its assertions, as a pytest fixture does.
        head: [
          'import { expect, test } from "vitest";',
          `import { READY, STATE } from "../src/c${padded(cell)}.js";`,
          'const it = test.extend({ ready: async ({}, use) => { if (STATE === "errored") throw new TypeError("the fixture broke"); await use(true); } });',
        ],
        caseOpen: '(STATE === "xfailed" ? it.fails : it.skipIf(STATE === "skipped"))("case", ({ ready }) => {',
        caseBody: ["expect(ready).toBe(true);", 'expect(STATE).toBe("passed");'],
        anchor: 'test("anchor", () => expect(READY).toBe(true));',
        other: 'test("other", () => {});',
      },
      cell,
    ),
  ofCell: (cell, result) => result.id.startsWith(`tests/c${padded(cell)}.test.js::`),
  isRest: (result) => result.id.startsWith("tests/rest.test.js::"),
  retired: (cell) => `tests/c${padded(cell)}.test.js::case`,
  isCase: (result) => result.id.endsWith("::case"),
  shows: {
    skipped: (results) => expect(results.find((result) => result.id.endsWith("::case"))).toMatchObject({ outcome: "skipped" }),
    xfailed: (results) => expect(results.find((result) => result.id.endsWith("::case"))?.outcome).toBe("passed"),
    "no-case": (results) => expect(results).toEqual([expect.objectContaining({ outcome: "failed" })]),
  },
};

/** jest and jest-junit: published versions installed at test time into a cache (the project does not depend on them). */
const JEST_TOOLS = ["jest@30.5.2", "jest-junit@17.0.0"];
let jestModules = "";

/**
 * jest through jest-junit, run by the gate `factory init` writes. Its standings: `test.failing` (jest's expected
 * failure) is reported as passed; `test.skip` gives no reason; a file that fails to load, or holds no test, is a
 * failing "Test suite failed to run" entry named by its path.
 */
const JEST_KIT: RunnerKit = {
  name: "jest",
  // The gate exactly as `factory init` writes it for a jest project with jest-junit at the repository's root.
  run: testGate({ name: "app", dir: ".", kind: "node", testRunner: "jest", jestJunit: true, packageManager: "npm" }, true) as string,
  files: { "package.json": "{}\n", "jest.config.js": 'module.exports = { cacheDirectory: ".jest-cache" };\n', "tests/rest.test.js": 'test("rest", () => {});\n' },
  rest: "tests/rest.test.js",
  prepare: (tree) => symlinkSync(jestModules, join(tree, "node_modules")),
  source: (cell, state, ready) => [`src/c${padded(cell)}.js`, `exports.STATE = ${JSON.stringify(state)};\nexports.READY = ${ready};\n`],
  testFile: (cell) => `tests/c${padded(cell)}.test.js`,
  testModule: (cell) =>
    jsTestModule(
      {
        head: [`const { READY, STATE } = require("../src/c${padded(cell)}.js");`],
        caseOpen: '(STATE === "xfailed" ? test.failing : STATE === "skipped" ? test.skip : test)("case", () => {',
        caseBody: ['if (STATE === "errored") throw new TypeError("the setup broke");', 'expect(STATE).toBe("passed");'],
        anchor: 'test("anchor", () => expect(READY).toBe(true));',
        other: 'test("other", () => {});',
      },
      cell,
    ),
  ofCell: (cell, result) => result.file === `tests/c${padded(cell)}.test.js`,
  isRest: (result) => result.file === "tests/rest.test.js",
  retired: (cell) => `tests/c${padded(cell)}.test.js::case`,
  isCase: (result) => result.id.endsWith("::case"),
  shows: VITEST_KIT.shows,
};

/** mocha: a published version installed at test time into a cache (the project does not depend on it). */
const MOCHA_TOOLS = ["mocha@12.0.3"];
let mochaModules = "";

/**
 * mocha through its built-in xunit reporter, run by the gate `factory init` writes (`--parallel`: a file that cannot
 * load is one failing entry named by its path, and the rest run). Its standings: no expected failure of its own (a
 * known failure is marked pending, `it.skip`), a skip gives no reason, a file that yields no test is not in the report.
 */
const MOCHA_KIT: RunnerKit = {
  name: "mocha",
  run: testGate({ name: "app", dir: ".", kind: "node", testRunner: "mocha", packageManager: "npm" }, true) as string,
  files: { "package.json": '{ "type": "module" }\n', "tests/rest.test.js": 'it("rest", () => {});\n' },
  rest: "tests/rest.test.js",
  namesOneUnloadable: true,
  prepare: (tree) => symlinkSync(mochaModules, join(tree, "node_modules")),
  source: (cell, state, ready) => [`src/c${padded(cell)}.js`, `export const STATE = ${JSON.stringify(state)};\nexport const READY = ${ready};\n`],
  testFile: (cell) => `tests/c${padded(cell)}.test.js`,
  testModule: (cell) =>
    jsTestModule(
      {
        head: ['import assert from "node:assert/strict";', `import { READY, STATE } from "../src/c${padded(cell)}.js";`],
        caseOpen: '(STATE === "xfailed" || STATE === "skipped" ? it.skip : it)("case", () => {',
        caseBody: ['if (STATE === "errored") throw new TypeError("the setup broke");', 'assert.equal(STATE, "passed");'],
        anchor: 'it("anchor", () => assert.ok(READY));',
        other: 'it("other", () => {});',
      },
      cell,
    ),
  ofCell: (cell, result) => result.file === `tests/c${padded(cell)}.test.js`,
  isRest: (result) => result.file === "tests/rest.test.js",
  retired: (cell) => `tests/c${padded(cell)}.test.js::case`,
  isCase: (result) => result.id.endsWith("::case"),
  shows: {
    skipped: VITEST_KIT.shows?.skipped,
    xfailed: (results) => expect(results.find((result) => result.id.endsWith("::case"))).toEqual(expect.objectContaining({ outcome: "skipped" })),
  },
};

/** ava: a published version installed at test time into a cache (the project does not depend on it). */
const AVA_TOOLS = ["ava@6.4.1"];
let avaModules = "";

/**
 * ava through its TAP reporter, run by the gate `factory init` writes. The factory names a case by its title alone
 * (ava's file part depends on the run's files), so every case's name carries its cell, as node:test's do. Its standings: `test.failing` (its expected failure) is
 * reported as passed, `test.skip` gives no reason, a file that cannot load is one failing entry named by its path
 * ("… exited with a non-zero exit code"), and so is one that declares no test ("No tests found in …").
 */
const AVA_KIT: RunnerKit = {
  name: "ava",
  run: testGate({ name: "app", dir: ".", kind: "node", testRunner: "ava", packageManager: "npm" }, true) as string,
  files: {
    "package.json": '{ "type": "module", "ava": { "files": ["tests/**/*.test.js"], "cache": false } }\n',
    "tests/rest.test.js": 'import test from "ava";\ntest("rest", (t) => t.pass());\n',
  },
  rest: "tests/rest.test.js",
  prepare: (tree) => symlinkSync(avaModules, join(tree, "node_modules")),
  source: (cell, state, ready) => [`src/c${padded(cell)}.js`, `export const STATE = ${JSON.stringify(state)};\nexport const READY = ${ready};\n`],
  testFile: (cell) => `tests/c${padded(cell)}.test.js`,
  testModule: (cell) =>
    jsTestModule(
      {
        head: ['import test from "ava";', `import { READY, STATE } from "../src/c${padded(cell)}.js";`],
        caseOpen: `(STATE === "xfailed" ? test.failing : STATE === "skipped" ? test.skip : test)("c${padded(cell)} case", (t) => {`,
        caseBody: ['if (STATE === "errored") throw new TypeError("the setup broke");', 't.is(STATE, "passed");'],
        anchor: `test("c${padded(cell)} anchor", (t) => t.true(READY));`,
        other: `test("c${padded(cell)} other", (t) => t.pass());`,
      },
      cell,
    ),
  ofCell: (cell, result) => result.id.startsWith(`c${padded(cell)} `) || result.id === `tests/c${padded(cell)}.test.js`,
  isRest: (result) => result.id === "rest",
  retired: (cell) => `c${padded(cell)} case`,
  isCase: (result) => result.id.endsWith(" case"),
  shows: {
    skipped: (results) => expect(results.find((result) => result.id.endsWith(" case"))).toMatchObject({ outcome: "skipped" }),
    xfailed: (results) => expect(results.find((result) => result.id.endsWith(" case"))?.outcome).toBe("passed"),
    "no-case": (results) => expect(results).toEqual([expect.objectContaining({ outcome: "failed" })]),
  },
};

interface Run {
  results: TestResult[];
  exitCode: number;
}

const made: string[] = [];

/**
 * Ceilings, not measurements: one run of a runner over the cells' ~200 files is several times slower at a load of 10
 * (two copies of the suite at once, issue 57 §4), where 120 s for a run and 300 s for a kit's three stages made
 * vitest's and ava's setups time out (their 402 cells then reported as skipped). A setup that still times out fails.
 */
const RUN_CEILING_MS = 480_000;
const STAGES_CEILING_MS = 3 * RUN_CEILING_MS + 120_000;

async function runGate(kit: RunnerKit, tree: string, files: string[], name: string, together: boolean): Promise<Run> {
  const run = together || !kit.together ? kit.run : kit.run.replace(kit.together, "");
  const gate: GateConfig = { name: "tests", run, tests: true, files: undefined, fix: undefined, timeoutMs: undefined };
  const surface: Surface = { name: "app", dir: ".", install: undefined, gates: [gate], network: false };
  const ran = await runCommandGate({ gate, surface, worktree: tree, changed: [], runDir: join(tree, "..", `run-${name}`), timeoutMs: RUN_CEILING_MS, baseline: undefined, tests: files });
  if (!ran.results || ran.exitCode === undefined) throw new Error(`${name}: the gate did not run: ${ran.report.summary}`);
  return { results: ran.results, exitCode: ran.exitCode };
}

function write(tree: string, path: string, text: string): void {
  mkdirSync(dirname(join(tree, path)), { recursive: true });
  writeFileSync(join(tree, path), text);
}

/** One stage's tree, run: the cells the runner can run together, then each one it stops at on its own (with the rest). */
async function runStage(kit: RunnerKit, stage: Stage): Promise<Map<number, Run>> {
  const root = mkdtempSync(join(tmpdir(), `factory-transitions-${stage}-`));
  made.push(root);
  const tree = join(root, "tree");
  for (const [path, text] of Object.entries(kit.files)) write(tree, path, text);
  kit.prepare?.(tree);
  for (const cell of cells) write(tree, ...kit.source(cell, standingAt(cell, stage), stage === "candidate" || cell.allPassBefore === true));
  const present = cells.filter((cell) => HAS_FILE[stage](cell.role));
  for (const cell of present) write(tree, kit.testFile(cell), kit.testModule(cell));
  const alone = kit.together || kit.namesOneUnloadable ? present.filter((cell) => standingAt(cell, stage) === "uncollectable") : [];
  const together = present.filter((cell) => !alone.includes(cell));
  const mine = (cell: Cell, results: readonly TestResult[]): TestResult[] => results.filter((result) => kit.ofCell(cell, result) || kit.isRest(result));
  const out = new Map<number, Run>();
  const batch = await runGate(kit, tree, [kit.rest, ...together.map(kit.testFile)], `${stage}-together`, true);
  for (const cell of cells.filter((candidate) => !alone.includes(candidate))) {
    const results = mine(cell, batch.results);
    out.set(cell.n, { results, exitCode: results.some((result) => result.outcome === "failed") ? 1 : 0 });
  }
  for (const cell of alone) {
    const run = await runGate(kit, tree, [kit.rest, kit.testFile(cell)], `${stage}-c${cell.n}`, false);
    out.set(cell.n, { results: mine(cell, run.results), exitCode: run.exitCode });
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
function judge(kit: RunnerKit, runs: ReadonlyMap<Stage, ReadonlyMap<number, Run>>, cell: Cell): Verdict {
  const at = (stage: Stage): Run => runs.get(stage)?.get(cell.n) as Run;
  const base = at("baseline");
  const now = at("candidate");
  const file = kit.testFile(cell);
  if (cell.role === "holdout") {
    // The hidden files run on their own ({tests}): what is not the rest is theirs.
    const hidden = (run: Run) =>
      judgeHoldout(
        hiddenCases(
          run.results.filter((result) => !kit.isRest(result)),
          [file],
          ".",
          true,
        ),
        1,
        ["I1"],
      );
    const before = hidden(at("planting"));
    if (before.ran === 0 || before.failed === 0) return "defective";
    return hidden(now).status === "pass" ? "pass" : "FAIL";
  }
  if (baselineProblem({ results: base.results, exitCode: base.exitCode, tail: undefined })) return "refused";
  const judged = { base: { name: "tests", command: kit.run, durationMs: 0 }, exitCode: now.exitCode, results: now.results, baseline: base.results, surfaceDir: "." };
  if (cell.role === "planted") {
    const planted = plantedCases({ files: [file], surfaceDir: ".", baseline: base.results, now: at("planting").results });
    if (planted.files.length === 0 || !hasFailingPlantedCase(planted.counts)) return "defective";
    return classify(judgeTests({ ...judged, planted }));
  }
  return classify(judgeTests({ ...judged, planted: undefined, takenAway: cell.role === "retired" ? [kit.retired(cell)] : [] }));
}

const jest = publishedTools(JEST_TOOLS);
if (jest.ok) jestModules = jest.modules;
else console.warn(`skipping the transition table through jest: ${jest.reason}`);
const mocha = publishedTools(MOCHA_TOOLS);
if (mocha.ok) mochaModules = mocha.modules;
else console.warn(`skipping the transition table through mocha: ${mocha.reason}`);
const ava = publishedTools(AVA_TOOLS);
if (ava.ok) avaModules = ava.modules;
else console.warn(`skipping the transition table through ava: ${ava.reason}`);
const runsOn: Record<Runner, boolean> = { pytest: available, "node:test": true, vitest: true, jest: jest.ok, mocha: mocha.ok, ava: ava.ok };

for (const kit of [PYTEST, NODE_TEST, VITEST_KIT, JEST_KIT, MOCHA_KIT, AVA_KIT]) {
  describe.skipIf(!runsOn[kit.name])(`every transition a test can make, through real ${kit.name}`, () => {
    const runs = new Map<Stage, Map<number, Run>>();
    beforeAll(async () => {
      for (const stage of ["baseline", "planting", "candidate"] as const) runs.set(stage, await runStage(kit, stage));
    }, STAGES_CEILING_MS);
    afterAll(() => {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    it("the standings are what the runner really reports", () => {
      // Each standing of the table is produced for real: a cell of the existing role shows it at the tip.
      const seen = (standing: Standing): TestResult[] => {
        const cell = cells.find((candidate) => candidate.role === "existing" && candidate.before === standing) as Cell;
        return (runs.get("baseline")?.get(cell.n)?.results ?? []).filter((result) => !kit.isRest(result));
      };
      expect(seen("passed").find(kit.isCase)?.outcome).toBe("passed");
      expect(seen("failed").find(kit.isCase)?.outcome).toBe("failed");
      expect(seen("errored").find(kit.isCase)?.outcome).toBe("failed");
      const shows = {
        skipped: (results: TestResult[]) => expect(results.find(kit.isCase)).toMatchObject({ outcome: "skipped", reason: "not on this machine" }),
        xfailed: (results: TestResult[]) => expect(results.find(kit.isCase)).toMatchObject({ outcome: "skipped", expectedFailure: true }),
        "no-case": (results: TestResult[]) => expect(results.filter((result) => result.outcome !== "passed")).toEqual([]),
        ...kit.shows,
      };
      shows.skipped(seen("skipped"));
      shows.xfailed(seen("xfailed"));
      expect(seen("uncollectable")).toEqual([expect.objectContaining({ outcome: "failed" })]);
      shows["no-case"](seen("no-case"));
    });

    it.each(cells.map((cell) => [`${cell.role}: ${cell.before} → ${cell.after}${cell.allPassBefore ? " (no case fails before the work)" : ""}`, cell] as const))("%s", (_name, cell) => {
      // An undefended cell is one the factory passes and should not: the table says so, and this pins that it still does.
      const expected = expectedOf(kit.name, cell);
      expect(judge(kit, runs, cell)).toBe(expected === "undefended" ? "pass" : expected);
    });
  });
}
