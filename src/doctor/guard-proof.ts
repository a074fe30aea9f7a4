import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { runCommandGate } from "../gates/command.js";
import type { TestResult } from "../gates/junit.js";
import { ALWAYS_FORBIDDEN } from "../gates/paths.js";
import { isTestFile, realCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import { changedPaths } from "../git/diff.js";
import { listTree } from "../git/repo.js";
import { commitPaths, commitWorktree, createWorktree, removeWorktree, resetWorktreeTo } from "../git/worktree.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import { baselineProblem, judgedOtherwiseInside, runTests } from "../loop/baseline.js";
import { checkInterrupted, type RunContext, worktreesDir } from "../loop/context.js";
import { builtinReports } from "../loop/gates.js";
import { installSurface } from "../loop/prepare.js";
import { probePathFor, violationFor } from "./gate-violations.js";
import { failingTestBeside, filesRunBy, languageOf, PROBE_DIR, type ProofLine, provenBy, skipMarkerFor } from "./probes.js";

export type ProofContext = Pick<RunContext, "root" | "config" | "signal">;

/** A test file is one to probe with when doctor can write its language and it defines a test the tamper gate recognises. */
const DEFINES_TEST = /^\s*(async\s+)?def\s+test\w*\s*\(|\b(it|test)\s*\(\s*["'`]/m;

/**
 * `factory doctor`'s proof that the guards are armed in this repository, with
 * its git configuration, its test runners and its sandbox: in a scratch
 * worktree of `tip`, each guard and tests gate is run, by the same code as in
 * a run, on a synthetic violation (it must fail) and on honest work or the
 * untouched tree (it must pass). The worktree is removed afterwards.
 */
export async function proveGuards(ctx: ProofContext, input: { tip: string; surfaces: readonly Surface[]; runDir: string }): Promise<ProofLine[]> {
  const worktree = join(worktreesDir(ctx.root), `_doctor-${process.pid}`);
  await createWorktree(ctx.root, { path: worktree, start: input.tip });
  try {
    mkdirSync(input.runDir, { recursive: true });
    const files = [...(await listTree(worktree, input.tip)).keys()].filter((path) => !path.startsWith("packets/"));
    const testFiles = files.filter((path) => isTestFile(path) && languageOf(path) && DEFINES_TEST.test(readText(worktree, path)));
    const lines = await proveBuiltins(ctx, { worktree, tip: input.tip, dir: input.surfaces[0]?.dir ?? ".", testFiles });
    for (const surface of input.surfaces) {
      checkInterrupted(ctx.signal);
      lines.push(...(await proveTestGates(ctx, { worktree, tip: input.tip, surface, testFiles, runDir: input.runDir })));
      lines.push(...(await proveCommandGates(ctx, { worktree, tip: input.tip, surface, files, runDir: input.runDir })));
    }
    return lines;
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

function readText(worktree: string, path: string): string {
  try {
    return readFileSync(join(worktree, path), "utf8");
  } catch {
    return "";
  }
}

function write(worktree: string, path: string, text: string): void {
  mkdirSync(dirname(join(worktree, path)), { recursive: true });
  writeFileSync(join(worktree, path), text);
}

/** untouched, scope, tamper and changed, on a synthetic packet whose files live under PROBE_DIR. */
async function proveBuiltins(ctx: ProofContext, input: { worktree: string; tip: string; dir: string; testFiles: readonly string[] }): Promise<ProofLine[]> {
  const { worktree } = input;
  const prefix = input.dir === "." ? "" : `${input.dir}/`;
  const probe = `${prefix}${PROBE_DIR}`;
  const planted = `${probe}/planted.txt`;
  const testFile = input.testFiles.find((path) => path.startsWith(prefix)) ?? input.testFiles[0];
  write(worktree, planted, "planted by factory doctor\n");
  const plantedCommit = await commitPaths(worktree, [planted], "factory doctor: a planted file");
  const packet = {
    planted: [planted],
    allowed: [`${probe}/allowed/**`, ...(testFile ? [testFile] : [])],
    deletable: [],
    forbidden: [...ALWAYS_FORBIDDEN, `${probe}/forbidden/**`],
  };
  const attempt = async (change: () => void): Promise<GateReport[]> => {
    checkInterrupted(ctx.signal);
    await resetWorktreeTo(worktree, plantedCommit);
    change();
    const commit = await commitWorktree(worktree, "factory doctor: a synthetic attempt");
    const changes = await changedPaths(worktree, plantedCommit, commit);
    return builtinReports({ ...packet, worktree, plantedCommit, commit, changes, maxFileSize: ctx.config.limits.maxFileSizeBytes, surface: undefined });
  };
  const report = (reports: GateReport[], name: string): GateReport | undefined => reports.find((candidate) => candidate.name === name);
  const honest = await attempt(() => write(worktree, `${probe}/allowed/work.txt`, "honest work\n"));
  const lines: ProofLine[] = [];
  const prove = async (guard: string, violation: string, change: () => void): Promise<void> => {
    lines.push(provenBy(`guard ${guard}: fails on ${violation}, passes honest work`, report(await attempt(change), guard), report(honest, guard), violation));
  };
  await prove("untouched", "a planted file edited", () => appendFileSync(join(worktree, planted), "edited\n"));
  await prove("untouched", "a forbidden path touched", () => write(worktree, `${probe}/forbidden/touched.txt`, "touched\n"));
  await prove("scope", "a path out of scope", () => write(worktree, `${prefix}factory-doctor-outside.txt`, "out of scope\n"));
  await prove("changed", "an attempt that changes nothing", () => undefined);
  if (testFile) {
    await prove("tamper", `a skip marker added to ${testFile}`, () => appendFileSync(join(worktree, testFile), skipMarkerFor(testFile) ?? ""));
    await prove("tamper", `${testFile} deleted`, () => rmSync(join(worktree, testFile)));
  } else {
    lines.push({ what: "guard tamper", unproven: "the repository has no Python or JavaScript test file that defines a test, so doctor has none to weaken" });
  }
  await resetWorktreeTo(worktree, input.tip);
  return lines;
}

/**
 * Each tests gate of a surface, installed as in a run: it runs the suite at
 * the tip, passes the untouched tree, fails with a failing test added beside
 * a file it runs, and fails with a file of passing tests removed.
 */
async function proveTestGates(ctx: ProofContext, input: { worktree: string; tip: string; surface: Surface; testFiles: readonly string[]; runDir: string }): Promise<ProofLine[]> {
  const { worktree, surface } = input;
  const gates = surface.gates.filter((gate) => gate.tests);
  const named = (gate: string): string => `surface "${surface.name}": tests gate "${gate}"`;
  if (gates.length === 0) return [{ what: `surface "${surface.name}"`, unproven: "it has no tests gate (tests = true), so no test failure can stop a packet" }];
  const installError = await installSurface(ctx, worktree, surface, input.runDir);
  if (installError) return gates.map((gate) => ({ what: named(gate.name), notArmed: installError }));
  const measured = await runTests(ctx, { worktree, surface, runDir: input.runDir });
  if (!measured.ok) return gates.map((gate) => ({ what: named(gate.name), notArmed: measured.reason }));
  const differs = await judgedOtherwiseInside(ctx, { worktree, surface, runDir: input.runDir }, measured.runs);
  if (differs) return gates.map((gate) => ({ what: named(gate.name), notArmed: differs }));
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  const lines: ProofLine[] = [];
  for (const gate of gates) {
    const baseline = measured.runs.get(gate.name);
    const problem = baseline ? baselineProblem(baseline) : "it was not measured";
    if (!baseline || problem) {
      lines.push({ what: named(gate.name), notArmed: `it cannot run the suite at the tip: ${problem}` });
      continue;
    }
    const passingAtTip = realCases(baseline.results).filter((result) => result.outcome === "passed").length;
    if (passingAtTip === 0) {
      lines.push({ what: named(gate.name), notArmed: `no test passes at the tip (${realCases(baseline.results).length} ran), so it cannot see a regression; fix the suite first` });
      continue;
    }
    const judge = (change: () => void): Promise<GateReport> => judgeOnTip(ctx, { worktree, tip: input.tip, surface, gate, runDir: input.runDir, changed: [], baseline: baseline.results }, change);
    const quiet = await judge(() => undefined);
    const run = filesRunBy(
      baseline.results,
      input.testFiles.filter((path) => path.startsWith(prefix)).map((path) => ({ path, text: readText(worktree, path) })),
      (path) => [path, path.slice(prefix.length)],
    );
    // Beside a file the report runs; when the report names no files (a runner that reports by name alone, or
    // a command that copies a fixed report), beside a test file where the repository keeps its tests.
    const bySurface = input.testFiles.filter((path) => path.startsWith(prefix));
    const beside = [...run.map((file) => file.path), ...bySurface].map((path) => failingTestBeside({ path, text: readText(worktree, path) })).find((probe) => probe !== undefined);
    if (beside) {
      const fired = await judge(() => write(worktree, beside.path, beside.text));
      lines.push(provenBy(`${named(gate.name)}: fails with a failing test added (${beside.path}), passes the untouched tree`, fired, quiet, "a failing test added"));
    } else {
      lines.push({ what: `${named(gate.name)}: a failing test added`, unproven: "its report ties no test to a Python or JavaScript file doctor can write beside" });
    }
    const passing = run.find((file) => file.passing > 0);
    if (passing) {
      const fired = await judge(() => rmSync(join(worktree, passing.path)));
      lines.push(provenBy(`${named(gate.name)}: fails with a file of passing tests removed (${passing.path}), passes the untouched tree`, fired, quiet, "a passing test removed"));
    } else {
      lines.push({ what: `${named(gate.name)}: a passing test removed`, unproven: "its report ties no passing test to a file" });
    }
  }
  await resetWorktreeTo(worktree, input.tip);
  return lines;
}

/**
 * Each lint, format, type or build gate of a surface (not a tests gate): it passes the untouched tree and
 * fails with the smallest file its tool must refuse (doctor/gate-violations.ts) written beside a file it
 * judges. A gate that stays green is NOT ARMED; one doctor has no violation for is unproven.
 */
async function proveCommandGates(ctx: ProofContext, input: { worktree: string; tip: string; surface: Surface; files: readonly string[]; runDir: string }): Promise<ProofLine[]> {
  const { worktree, surface } = input;
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  const inSurface = input.files.filter((path) => path.startsWith(prefix)).map((path) => path.slice(prefix.length));
  const endings = new Set(inSurface.map((path) => extname(path)));
  const lines: ProofLine[] = [];
  for (const gate of surface.gates.filter((candidate) => !candidate.tests)) {
    const named = `surface "${surface.name}": gate "${gate.name}"`;
    const violation = violationFor(gate, endings);
    if (!violation) {
      lines.push({
        what: named,
        unproven: `doctor knows no violation that \`${gate.run}\` must refuse (it makes one for ruff, black, flake8, pylint, mypy, pyright, tsc, eslint, biome, prettier, node --check and npm/pnpm/yarn build or lint scripts): prove it by hand`,
      });
      continue;
    }
    const place = probePathFor(violation, gate, inSurface);
    if (!place) {
      lines.push({
        what: named,
        unproven: `the surface tracks no ${violation.ending} file it judges${gate.files ? ` (files = "${gate.files}")` : ""}, so doctor has nowhere to put ${violation.what}`,
      });
      continue;
    }
    const judge = (changed: string, change: () => void): Promise<GateReport> =>
      judgeOnTip(ctx, { worktree, tip: input.tip, surface, gate, runDir: input.runDir, changed: [`${prefix}${changed}`] }, change);
    const quiet = await judge(place.beside, () => undefined);
    const fired = await judge(place.probe, () => write(worktree, `${prefix}${place.probe}`, violation.text));
    lines.push(provenBy(`${named}: fails with ${violation.what} (${prefix}${place.probe}), passes the untouched tree`, fired, quiet, violation.what));
  }
  await resetWorktreeTo(worktree, input.tip);
  return lines;
}

/** One gate run on the tip with `change` made, by the same code as in a run: a tests gate judged against `baseline`. */
async function judgeOnTip(
  ctx: ProofContext,
  input: { worktree: string; tip: string; surface: Surface; gate: GateConfig; runDir: string; changed: string[]; baseline?: TestResult[] },
  change: () => void,
): Promise<GateReport> {
  checkInterrupted(ctx.signal);
  await resetWorktreeTo(input.worktree, input.tip);
  change();
  const { report } = await runCommandGate({
    gate: input.gate,
    surface: input.surface,
    worktree: input.worktree,
    changed: input.changed,
    runDir: input.runDir,
    timeoutMs: input.gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
    baseline: input.baseline,
    ...(input.baseline ? { finishedOnBaseline: true } : {}),
    signal: ctx.signal,
    ...sandboxed(ctx, input.worktree, input.surface.network),
  });
  return report;
}
