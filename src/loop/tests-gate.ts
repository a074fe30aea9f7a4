import type { GateConfig, Surface } from "../config/types.js";
import { judgeTests, rerunTargets, runCommandGate, TESTS_PLACEHOLDER } from "../gates/command.js";
import { describePlantedFlips, flakyAsAtBaseline, plantedFlips } from "../gates/flaky.js";
import type { TestResult } from "../gates/junit.js";
import { casesOfFiles, checkPlanted, hasCasesOf, outcomesById, type PlantedCases, realCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import { describeVerdictTree, readsToPutBack, type VerdictTree } from "../gates/verdict-tree.js";
import type { Change } from "../git/diff.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import { checkInterrupted, type RunContext } from "./context.js";
import type { GateRunInput } from "./gate-run-input.js";
import { type Reruns, rerunFailing } from "./reruns.js";
import { applyVerdictTree, differs } from "./verdict-tree.js";

export interface TestsGateInput {
  gate: GateConfig;
  /** The changed paths, for `{files}`. */
  changed: readonly string[];
  /** The change itself (planted commit to the gated commit): what a traced read may show edited. */
  changes: readonly Change[];
  takenAway: readonly string[];
  plantedCases: Readonly<Record<string, PlantedCases>>;
  /** The verdict tree of the change; undefined: the gated commit as it is (a combined tree, a merge batch). A read may add to it. */
  tree: VerdictTree | undefined;
  /** Back to the gated commit for the next tests run (guards/runner-state.ts). */
  freshen: () => Promise<void>;
}

export interface TestsGateRun {
  reports: GateReport[];
  reruns?: Reruns;
  /** The results that hold for the commit as it lands (what may seed the next tip's baseline); undefined when no run saw that tree. */
  results?: TestResult[];
  /** The packet itself is at fault: a planted case whose runs disagree. */
  defective?: string;
}

/**
 * One tests gate (DESIGN §6, "The verdict tree"): the whole suite once on the verdict tree (traced: a file it
 * read that the change edited is put back too, and the suite runs again), judged against the tip's baseline
 * and the planted cases, its failing tests rerun there before any is blamed; then the change's own test
 * files as the commit has them; then the planted tests on their own.
 */
export async function runTestsGate(ctx: RunContext, input: GateRunInput, run: TestsGateInput): Promise<TestsGateRun> {
  const { gate, tree } = run;
  const surface = input.surface as Surface;
  const baseline = input.baseline.get(gate.name) ?? [];
  const planted = run.plantedCases[gate.name];
  const onTree = async (): Promise<void> => {
    await run.freshen();
    if (differs(tree)) await applyVerdictTree(input.worktree, input.plantedCommit, tree);
  };
  const suite = async () => {
    await onTree();
    const gated = await runCommandGate({
      gate,
      surface,
      worktree: input.worktree,
      changed: run.changed,
      runDir: input.runDir,
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
      baseline,
      ...(planted ? { planted } : {}),
      takenAway: run.takenAway,
      // Measured at the tip, it finished there: a hang now is the work's.
      finishedOnBaseline: input.baseline.has(gate.name),
      signal: ctx.signal,
      trace: tree !== undefined,
      ...sandboxed(ctx, input.worktree, surface.network),
    });
    checkInterrupted(ctx.signal); // a gate killed by Ctrl-C says nothing about the work
    return gated;
  };
  let gated = await suite();
  // What this run read that the change edited, and the tree did not put back yet, judges the work as the tip has it.
  const more = tree && gated.reads ? readsToPutBack(tree, gated.reads, { ...input.packet, changedTests: input.packet.changedTests, planted: input.planted, changes: run.changes }) : [];
  if (tree && more.length > 0) {
    tree.putBack.push(...more);
    gated = await suite();
  }
  const { results } = gated;
  let { report } = gated;
  let found: Reruns | undefined;
  const targets = gated.judged && report.status === "fail" && ctx.config.tests.reruns > 0 ? rerunTargets(gated.judged) : [];
  if (gated.judged && results && targets.length > 0) {
    // A test that passed at the tip and fails here may be flaky: run again here and on the untouched tip before it is blamed.
    found = await rerunFailing(ctx, {
      gate,
      surface,
      worktree: input.worktree,
      runDir: input.runDir,
      ids: targets,
      first: results,
      baseline,
      tip: input.tip,
      firstMs: report.durationMs,
      freshen: onTree,
    });
    const judged = judgeTests({ ...gated.judged, reruns: found.verdict });
    report = found.cutShort ? { ...judged, summary: `${judged.summary} (the reruns ran out of time before all of them ran)` } : judged;
  }
  await run.freshen(); // the gated commit again
  const onItsTree = results ? (found ? flakyAsAtBaseline(results, baseline, found.verdict.flaky) : results) : undefined;
  const reports = [differs(tree) ? onVerdictTree(report, tree) : report];
  let landing: TestResult[] | undefined = differs(tree) ? undefined : onItsTree;
  if (tree && tree.ownTests.length > 0) {
    const own = await ownTests(ctx, input, run, tree.ownTests);
    reports.push(own.report);
    // The landing's results: the verdict tree's where it is the landing's, the change's own files' from their run.
    const named = [...tree.ownTests, ...tree.putBack.map((entry) => entry.path), ...tree.leftOut];
    const same = tree.putBack.every((entry) => tree.ownTests.includes(entry.path)) && tree.leftOut.every((path) => tree.ownTests.includes(path));
    if (own.results && onItsTree && own.alone && same) {
      const elsewhere = new Set(casesOfFiles(onItsTree, named, surface.dir));
      landing = [...onItsTree.filter((result) => !elsewhere.has(result)), ...own.results];
    } else if (own.results && !own.alone) landing = own.results;
  }
  let defective: string | undefined;
  if (new RegExp(TESTS_PLACEHOLDER.source).test(gate.run) && planted?.files.length) {
    await run.freshen();
    const alone = await plantedOnly(ctx, input, gate, planted, results ?? [], run.freshen);
    reports.push(alone.report);
    defective = alone.flips;
  }
  return { reports, ...(found ? { reruns: found } : {}), ...(landing ? { results: landing } : {}), ...(defective ? { defective } : {}) };
}

/** A verdict run's report saying the tree it ran on; a failure says what the change must declare. */
function onVerdictTree(report: GateReport, tree: VerdictTree): GateReport {
  const described = describeVerdictTree(tree);
  if (report.status !== "fail") return { ...report, summary: `${report.summary} (${described})` };
  const remedy = tree.putBack.length ? "the change edits what judges it; name those files in the packet's changed_tests if that is the task" : "something the change added steers the team's tests";
  return { ...report, summary: `${report.summary} ${described}: ${remedy}` };
}

/**
 * The change's own test files as the commit has them (new ones, and its versions of the team's it edited): named
 * through `{tests}` where the gate can, judged against the baseline's cases of those files (every case that was
 * there must pass, every new one too); the whole suite on the commit where it cannot.
 */
async function ownTests(ctx: RunContext, input: GateRunInput, run: TestsGateInput, files: readonly string[]): Promise<{ report: GateReport; results?: TestResult[]; alone: boolean }> {
  const { gate } = run;
  const surface = input.surface as Surface;
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  const alone = new RegExp(TESTS_PLACEHOLDER.source).test(gate.run);
  const baseline = input.baseline.get(gate.name) ?? [];
  const planted = run.plantedCases[gate.name];
  await run.freshen();
  const { report, results } = await runCommandGate({
    gate: { ...gate, name: `${gate.name} (the change's own tests)` },
    surface,
    worktree: input.worktree,
    changed: run.changed,
    runDir: input.runDir,
    timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
    baseline: alone ? casesOfFiles(baseline, files, surface.dir) : baseline,
    ...(alone ? { tests: files.filter((file) => file.startsWith(prefix)).map((file) => file.slice(prefix.length)) } : planted ? { planted } : {}),
    takenAway: run.takenAway,
    finishedOnBaseline: input.baseline.has(gate.name),
    signal: ctx.signal,
    ...sandboxed(ctx, input.worktree, surface.network),
  });
  checkInterrupted(ctx.signal);
  const named = `${files.slice(0, 3).join(", ")}${files.length > 3 ? `, and ${files.length - 3} more` : ""}`;
  const shown = alone ? `${named}, as the change has them` : `the whole suite as the change has it, for ${named}`;
  return { report: { ...report, summary: `${report.summary} (${shown})` }, ...(results ? { results } : {}), alone };
}

/**
 * The planted tests run on their own, through `{tests}`: no new test module
 * or test of the agent's is collected beside them, so none can change their
 * outcome (a module that patches the implementation at import, a fixture
 * that fakes a result). Each planted case must pass here too. They run
 * `[tests] reruns` times (once when 0): a planted case whose runs disagree,
 * here or with the whole suite, makes the packet defective, never merged on
 * a lucky run (`flips`).
 */
/** `withTheRest`: the whole suite's results: a planted case that passed there and fails alone was steered by something collected beside it. */
async function plantedOnly(
  ctx: RunContext,
  input: GateRunInput,
  gate: GateConfig,
  planted: PlantedCases,
  withTheRest: readonly TestResult[],
  freshen: () => Promise<void>,
): Promise<{ report: GateReport; flips?: string }> {
  const surface = input.surface as Surface;
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  const name = `${gate.name} (planted only)`;
  const times = Math.max(1, ctx.config.tests.reruns);
  const runs: { report: GateReport; results: TestResult[] | undefined }[] = [];
  for (let run = 1; run <= times; run++) {
    if (run > 1) await freshen();
    const { report, results } = await runCommandGate({
      gate: { ...gate, name: run === 1 ? name : `${name} (run ${run})` },
      surface,
      worktree: input.worktree,
      changed: [],
      runDir: input.runDir,
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
      baseline: undefined,
      tests: planted.files.map((file) => file.slice(prefix.length)),
      signal: ctx.signal,
      ...sandboxed(ctx, input.worktree, surface.network),
    });
    checkInterrupted(ctx.signal);
    runs.push({ report, results });
    if (!results) break;
  }
  const [{ report, results }] = runs as [(typeof runs)[number]];
  if (!results) return { report: { ...report, status: "fail", summary: `the planted tests, run on their own, gave no results: ${report.summary}` } };
  const inSuite = outcomesById(withTheRest);
  if (ctx.config.tests.reruns > 0) {
    // A run that gave no results (it hung or crashed) says nothing of any case's outcome.
    const alone = runs.flatMap((each) => (each.results ? [outcomesById(each.results)] : []));
    const cases = [...new Set([...planted.cases, ...runs.flatMap((each) => realCases(each.results ?? []).map((result) => result.id))])].sort();
    const flipped = plantedFlips(cases, inSuite, alone);
    if (flipped.length > 0) {
      const flips = describePlantedFlips(flipped);
      return { report: { ...report, status: "fail", summary: flips, findings: flipped.map((flip) => ({ file: flip.id, message: `passed ${flip.passed} of ${flip.runs} runs` })) }, flips };
    }
  }
  const { findings } = checkPlanted({ planted, surfaceDir: surface.dir, baseline: input.baseline.get(gate.name) ?? [], now: results });
  const passing = realCases(results).filter((result) => result.outcome === "passed").length;
  const ran = runs.length > 1 ? `, ${runs.length} runs` : "";
  if (findings.length === 0) return { report: { ...report, status: "pass", summary: `${passing} planted test(s) pass on their own${ran}`, findings: [] } };
  // Said only of cases that passed in the whole suite: one failing there as well is not steered by what else was collected.
  const passedThere = withTheRest.filter((result) => result.outcome === "passed");
  // A finding names a case, or a whole planted file (then its cases passed there).
  const passedWithTheRest = findings.some((finding) => inSuite.get(finding.id) === "passed" || hasCasesOf(passedThere, finding.id, surface.dir));
  return {
    report: {
      ...report,
      status: "fail",
      findings: findings.map((finding) => ({ file: finding.id, message: finding.message })),
      summary: `${findings.length} planted test(s) do not pass when run on their own${passedWithTheRest ? ": something else collected beside them changes their outcome" : ""}`,
    },
  };
}
