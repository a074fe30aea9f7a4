import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { DOUBLE_JS, JUNIT_RUNNER, useLoopRepos } from "../helpers/loop-repo.js";
import { pytestAvailable } from "../helpers/python-queue.js";
import { ruffBin } from "../helpers/ruff.js";

const PROJECT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `factory doctor` proves the guards armed: in a scratch worktree of the
 * user's repository, each guard and tests gate must fail on a synthetic
 * violation and pass honest work. Run through the CLI, as a user does.
 */
const setUp = useLoopRepos(afterEach);
const made: TestRepo[] = [];
afterEach(() => {
  for (const repo of made.splice(0)) repo.cleanup();
});

function doctor(dir: string, ...flags: string[]): { code: number | null; out: string } {
  const ruff = ruffBin();
  const result = runCli(["doctor", "--no-models", ...flags], dir, "dir" in ruff ? { PATH: `${ruff.dir}:${process.env.PATH}` } : {}, 150_000); // about 10 s on an idle machine
  return { code: result.code, out: `${result.stdout}${result.stderr}` };
}

/** Nothing of the proof is left: one worktree (the user's), a clean checkout, no probe file anywhere. */
function expectNothingLeft(repo: TestRepo): void {
  expect(repo.git("worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  expect(
    repo
      .git("status", "--porcelain", "--untracked-files=all")
      .split("\n")
      .filter((line) => line && !line.includes(".factory/")),
  ).toEqual([]);
  expect(execFileSync("find", [repo.dir, "-name", "*factory-doctor*", "-not", "-path", "*/.factory/runs/*"], { encoding: "utf8" })).toBe("");
}

describe("factory doctor proves the guards", { timeout: 180_000 }, () => {
  it("on a node:test project: every guard and the tests gate fire on their violation and pass honest work", () => {
    const target = setUp({ script: {} });
    const { code, out } = doctor(target.dir);
    expect(out).toContain("All checks pass.");
    for (const line of [
      "armed      guard untouched: fails on a planted file edited, passes honest work",
      "armed      guard untouched: fails on a forbidden path touched, passes honest work",
      "armed      guard scope: fails on a path out of scope, passes honest work",
      "armed      guard changed: fails on an attempt that changes nothing, passes honest work",
      "armed      guard tamper: fails on a skip marker added to test/calc.test.js, passes honest work",
      "armed      guard tamper: fails on test/calc.test.js deleted, passes honest work",
      'armed      surface "app": tests gate "test": fails with a failing test added (test/factory-doctor-probe.test.js), passes the untouched tree',
      'armed      surface "app": tests gate "test": fails with a file of passing tests removed (test/calc.test.js), passes the untouched tree',
      'armed      surface "app": gate "syntax": fails with a syntax error (src/factory-doctor-probe.js), passes the untouched tree',
    ])
      expect(out).toContain(line);
    expect(out).toContain("Everything proven here is armed.");
    expect(code).toBe(0);
    expectNothingLeft(target);
  });

  it("a tests gate that names its test files runs no new test: NOT ARMED, exit 1", () => {
    const gates = `
  [[surfaces.app.gates]]
  name = "test"
  run = "node --test --test-reporter=junit --test-reporter-destination={junit} test/calc.test.js"
  tests = true
`;
    const target = setUp({ gates, script: {} });
    const { code, out } = doctor(target.dir);
    expect(out).toMatch(
      /NOT ARMED {2}surface "app": tests gate "test": fails with a failing test added \(test\/factory-doctor-probe\.test\.js\), passes the untouched tree\n {11}it gave "pass" on a failing test added/,
    );
    expect(out).toContain('armed      surface "app": tests gate "test": fails with a file of passing tests removed');
    expect(out).toMatch(/\n1 NOT ARMED: a packet could pass without doing the work/);
    expect(code).toBe(1);
    expectNothingLeft(target);
    // --json: the same verdicts on stdout as JSON alone; the lines to read on stderr.
    const json = runCli(["doctor", "--no-models", "--json"], target.dir, {}, 150_000);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { schema: number; checks: { ok: boolean }[]; proofs: { what: string; status: string; why: string | null }[]; exit: number };
    expect(report).toMatchObject({ schema: 1, exit: 1 });
    expect(report.checks.length).toBeGreaterThan(2);
    expect(report.checks.every((check) => check.ok)).toBe(true);
    expect(report.proofs).toContainEqual({ what: expect.stringContaining('tests gate "test": fails with a failing test added'), status: "NOT ARMED", why: expect.stringContaining('it gave "pass"') });
    expect(report.proofs.filter((proof) => proof.status === "armed").length).toBeGreaterThan(3);
    expect(json.stderr).toContain("NOT ARMED");
    expectNothingLeft(target);
  });

  it("a tests gate whose report names no files and does not change (it copies a fixed JUnit file) is NOT ARMED: a failing test added where the repository keeps its tests is not seen", () => {
    const fixed = '<testsuites><testsuite name="s"><testcase name="adds" classname="suite"/></testsuite></testsuites>';
    const gates = `
  [[surfaces.app.gates]]
  name = "test"
  run = "cp ci/fixed.xml {junit}"
  tests = true
`;
    const target = setUp({ gates, script: {} });
    target.write("ci/fixed.xml", fixed);
    target.commit("a fixed report");
    const { code, out } = doctor(target.dir);
    expect(out).toMatch(/NOT ARMED {2}surface "app": tests gate "test": fails with a failing test added \(test\/factory-doctor-probe\.test\.js\), passes the untouched tree/);
    expect(out).not.toContain("Everything proven here is armed.");
    expect(code).toBe(1);
    expectNothingLeft(target);
  });

  it("what doctor could not prove is never summarised as armed", () => {
    const gates = `
  [[surfaces.app.gates]]
  name = "syntax"
  run = "for f in {files}; do node --check \\"$f\\" || exit 1; done"
  files = "**/*.js"
`;
    const target = setUp({ gates, planted: null, script: {} });
    const { code, out } = doctor(target.dir);
    expect(out).toMatch(/unproven {3}surface "app"\n {11}it has no tests gate/);
    expect(out).toContain("Armed where proven; 1 unproven (above): doctor could not show it firing here.");
    expect(out).not.toContain("Everything proven here is armed.");
    expect(code).toBe(0);
    expectNothingLeft(target);
  });

  it("checks every agent the config names, even one no queued packet uses yet: a missing program fails, a present one passes", () => {
    const missing = setUp({ script: {}, config: '\n[agents.ghost]\nkind = "command"\nrun = "no-such-agent-program --go"\n[tiers.premium]\nagent = "ghost"\nmodel = "m"\n' });
    const refused = doctor(missing.dir, "--no-guards");
    expect(refused.out).toContain('FAIL  agent "ghost": its program is found\n      agent "ghost": its program "no-such-agent-program" was not found on PATH');
    expect(refused.code).toBe(1);
    const present = setUp({ script: {}, config: '\n[agents.ghost]\nkind = "command"\nrun = "node --version"\n[tiers.premium]\nagent = "ghost"\nmodel = "m"\n' });
    const passed = doctor(present.dir, "--no-guards");
    expect(passed.out).toContain('ok    agent "ghost": its program is found');
    expect(passed.code, passed.out).toBe(0);
  });

  it("a tests gate whose every test fails at the tip cannot see a regression: NOT ARMED, naming why", () => {
    const target = setUp({ script: {} });
    target.write("test/calc.test.js", "import { nothing } from './missing.js';\n");
    target.commit("a suite that cannot load");
    const { code, out } = doctor(target.dir);
    expect(out).toMatch(/NOT ARMED {2}surface "app": tests gate "test"\n {11}no test passes at the tip \(1 ran\), so it cannot see a regression/);
    expect(code).toBe(1);
    expectNothingLeft(target);
  });

  it.skipIf(!pytestAvailable("doctor's pytest proof"))("on a pytest project run from the repository root, without a .gitignore for its caches", () => {
    const repo = makeRepo({ initialCommit: false });
    made.push(repo);
    repo.write("pkg/__init__.py", "");
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
    repo.write("tests/__init__.py", "");
    repo.write("tests/test_calc.py", "import pytest\nfrom pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n");
    repo.write(".gitignore", ".factory/state/\n.factory/worktrees/\n.factory/runs/\n");
    repo.write(
      ".factory/config.toml",
      `[surfaces.py]
dir = "."
  [[surfaces.py.gates]]
  name = "pytest"
  run = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}"
  tests = true
[agents.a]
kind = "command"
run = "true"
[tiers]
standard = { agent = "a", model = "m" }
`,
    );
    repo.commit("python project");
    const { code, out } = doctor(repo.dir);
    expect(out).toContain("armed      guard tamper: fails on a skip marker added to tests/test_calc.py, passes honest work");
    expect(out).toContain('armed      surface "py": tests gate "pytest": fails with a failing test added (tests/test_factory_doctor_probe.py), passes the untouched tree');
    expect(out).toContain('armed      surface "py": tests gate "pytest": fails with a file of passing tests removed (tests/test_calc.py), passes the untouched tree');
    expect(code).toBe(0);
    expectNothingLeft(repo);
  });
});

describe("factory doctor proves the lint, format, type and build gates", { timeout: 180_000 }, () => {
  const ruff = ruffBin();
  if ("missing" in ruff) console.warn(`skipping doctor's ruff gate proof: ${ruff.missing}`);
  const TSC = join(PROJECT, "node_modules", "typescript", "bin", "tsc");
  const BIOME = join(PROJECT, "node_modules", ".bin", "biome");

  /** A project with Python and TypeScript sources, a node:test tests gate, and `gates` (TOML lines) beside it. */
  function project(gates: string): TestRepo {
    const repo = makeRepo({ initialCommit: false });
    made.push(repo);
    repo.write("pkg/__init__.py", "");
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
    repo.write("src/calc.ts", "export function add(a: number, b: number): number {\n  return a + b;\n}\n");
    repo.write("tsconfig.json", JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", skipLibCheck: true, types: [] }, include: ["src"] }));
    repo.write("test/calc.test.js", `import assert from "node:assert/strict";\nimport test from "node:test";\n\ntest("adds", () => {\n  assert.equal(1 + 1, 2);\n});\n`);
    repo.write("package.json", JSON.stringify({ name: "mixed", private: true, type: "module" }));
    repo.write(".gitignore", ".factory/state/\n.factory/worktrees/\n.factory/runs/\n");
    repo.write(
      ".factory/config.toml",
      `[surfaces.app]\ndir = "."\n  [[surfaces.app.gates]]\n  name = "test"\n  run = "node --test-reporter=junit --test-reporter-destination={junit} '${JUNIT_RUNNER}' test/"\n  tests = true\n${gates}[agents.a]\nkind = "command"\nrun = "true"\n[tiers]\nstandard = { agent = "a", model = "m" }\n`,
    );
    repo.commit("a mixed project");
    return repo;
  }

  it.skipIf("missing" in ruff)("ruff check, ruff format, tsc and biome gates are each armed: red on their violation, green on the untouched tree", () => {
    const gates = [
      ["ruff", "ruff check {files}", "**/*.py"],
      ["ruff-format", "ruff format --check {files}", "**/*.py"],
      ["types", `node ${TSC} -p .`, undefined],
      ["biome", `${BIOME} lint --no-errors-on-unmatched {files}`, "src/**"],
    ]
      .map(([name, run, files]) => `  [[surfaces.app.gates]]\n  name = "${name}"\n  run = "${run}"\n${files ? `  files = "${files}"\n` : ""}`)
      .join("");
    const repo = project(gates);
    const { code, out } = doctor(repo.dir);
    for (const line of [
      'armed      surface "app": gate "ruff": fails with an unused import (pkg/factory_doctor_probe.py), passes the untouched tree',
      'armed      surface "app": gate "ruff-format": fails with a mis-formatted line (pkg/factory_doctor_probe.py), passes the untouched tree',
      'armed      surface "app": gate "types": fails with a type error (src/factory-doctor-probe.ts), passes the untouched tree',
      'armed      surface "app": gate "biome": fails with a syntax error (src/factory-doctor-probe.ts), passes the untouched tree',
    ])
      expect(out).toContain(line);
    expect(out).toContain("Everything proven here is armed.");
    expect(code).toBe(0);
    expectNothingLeft(repo);
  });

  it.skipIf("missing" in ruff)("a lint gate that always passes is NOT ARMED (exit 1); a gate doctor has no violation for is unproven, never armed", () => {
    const repo = project(
      '  [[surfaces.app.gates]]\n  name = "lint"\n  run = "ruff check {files} || true"\n  files = "**/*.py"\n  [[surfaces.app.gates]]\n  name = "house-rules"\n  run = "./check-house-rules {files}"\n',
    );
    const { code, out } = doctor(repo.dir);
    expect(out).toMatch(/NOT ARMED {2}surface "app": gate "lint": fails with an unused import \(pkg\/factory_doctor_probe\.py\), passes the untouched tree\n\s+it gave "pass" on an unused import/);
    expect(out).toMatch(/unproven {3}surface "app": gate "house-rules"\n\s+doctor knows no violation that `\.\/check-house-rules \{files\}` must refuse/);
    expect(out).toContain("1 NOT ARMED: a packet could pass without doing the work");
    expect(code).toBe(1);
    expectNothingLeft(repo);
  });
});

describe("factory doctor --reviewer", () => {
  it("a reviewer that rules held on a packet with nothing implemented is reported as rubber-stamping, exit 1", () => {
    const target = setUp({ script: {} }); // the scripted reviewer rules every invariant held unless told otherwise
    const { code, out } = doctor(target.dir, "--no-guards", "--reviewer");
    expect(out).toContain("Reviewer canary: 1 reviewer tier(s) review P01 with its planted files and nothing implemented (one paid review call per tier):");
    expect(out).toMatch(/NOT ARMED {2}reviewer tier "advanced": rules nothing held on unimplemented work \(\$0\.0100\)\n {11}rubber-stamping: it ruled doubles held, though nothing implements it/);
    expect(code).toBe(1);
    expectNothingLeft(target);
    expect(target.git("log", "--format=%s", "main").split("\n")[0]).toBe("queue");
  });

  it("a reviewer that finds the invariant violated there is armed; nothing is recorded as the packet's, and the call's spend is recorded", async () => {
    const target = setUp({ script: { P01: { reviewer: [{ invariants: "violated", evidence: "test/double.test.js:1" }] } } });
    const { code, out } = doctor(target.dir, "--no-guards", "--reviewer");
    expect(out).toContain('armed      reviewer tier "advanced": rules nothing held on unimplemented work ($0.0100): violated 1, unverifiable 0');
    // No packet has landed, so the mutant canary has nothing to show: said, never counted as armed.
    expect(out).toContain("unproven   reviewer mutant canary\n           no landed packet has a mutant its planted tests killed");
    expect(out).toContain("Armed where proven; 1 unproven (above)");
    expect(code).toBe(0);
    // The paid call is the night's spend, not the packet's: one "spent" event, and status counts it.
    expect(await target.events()).toEqual([expect.objectContaining({ kind: "spent", for: "doctor's reviewer canary (tier advanced)", costUsd: 0.01 })]);
    expectNothingLeft(target);
  });

  it("a reviewer that holds every invariant of a landed change with a mutant its planted tests kill is rubber-stamping; one that rules it violated is armed", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } }, config: "\n[planning]\nmutants = 3\nmutants_share = 0\n" });
    expect((await target.run()).code).toBe(0);
    const measured = (await target.events("P01")).find((event) => event.kind === "mutants-measured");
    expect(measured).toMatchObject({ killed: 3, killedExample: { file: "src/double.js", line: 2 } });

    // The scripted reviewer holds everything unless told otherwise.
    const stamped = doctor(target.dir, "--no-guards", "--reviewer");
    expect(stamped.out).toContain("Reviewer mutant canary: 1 reviewer tier(s) review P01's change with a mutant its tests kill (src/double.js:2");
    expect(stamped.out).toMatch(
      /NOT ARMED {2}reviewer tier "advanced": does not hold every invariant of P01 with a mutant its tests kill .*\n {11}rubber-stamping: it ruled every invariant held \(doubles\) on a change its own planted tests show broken/,
    );
    expect(stamped.code).toBe(1);
    expectNothingLeft(target);

    target.setScript({ P01: { reviewer: [{ invariants: "violated", evidence: "src/double.js:2" }] } });
    const armed = doctor(target.dir, "--no-guards", "--reviewer");
    expect(armed.out).toMatch(/armed {6}reviewer tier "advanced": does not hold every invariant of P01 with a mutant its tests kill .*: held 0, violated 1/);
  }, 200_000);
});
