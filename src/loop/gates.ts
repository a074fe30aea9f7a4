import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { runCommandGate, surfaceFiles } from "../gates/command.js";
import { parseUnifiedDiff } from "../gates/diff-parse.js";
import type { TestResult } from "../gates/junit.js";
import { newFindings } from "../gates/lint-compare.js";
import { AGENT_OUTPUTS, ALWAYS_FORBIDDEN, matchesAny, shellQuote } from "../gates/paths.js";
import type { PlantedCases } from "../gates/test-compare.js";
import { collectedFiles, isCodeFile, isDoctestModule, isTestByFacts, NO_TEST_FACTS, type TestFacts } from "../gates/test-files.js";
import type { Finding, GateReport } from "../gates/types.js";
import type { VerdictTree } from "../gates/verdict-tree.js";
import { type Change, changedPaths, diffText } from "../git/diff.js";
import { headOf, listTree, listTreeFiles, readFileAt } from "../git/repo.js";
import { commitWorktree, reduceToCommit, restoreWorktree } from "../git/worktree.js";
import { cheatSignatures } from "../guards/cheat-signatures.js";
import { exportIgnoredReads } from "../guards/export-ignore.js";
import { holdoutFiles } from "../guards/holdout.js";
import { isJsFile, jsAssertFacts } from "../guards/js-asserts.js";
import { pythonAssertFacts } from "../guards/python-asserts.js";
import { doctestExamples, rewrittenDoctests } from "../guards/python-doctests.js";
import { runnerState } from "../guards/runner-state.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import { checkScope } from "../guards/scope.js";
import { checkTamper, isTestPath, pytestSectionLines } from "../guards/tamper.js";
import { checkUntouched } from "../guards/untouched.js";
import { baseEnv, runCommand } from "../process/run.js";
import { checkInterrupted, type RunContext } from "./context.js";
import { runAsAtTip, runInvariantCheck } from "./gate-as-at-tip.js";
import type { BatchMember, GateRunInput } from "./gate-run-input.js";
import type { Reruns } from "./reruns.js";
import { runHoldout } from "./run-holdout.js";
import { runTestsGate } from "./tests-gate.js";
import { applyVerdictTree, differs, verdictTreeFor } from "./verdict-tree.js";

export const BUILTIN_GATES = ["untouched", "scope", "tamper", "changed"];

export interface GateRun {
  reports: GateReport[];
  /** HEAD after auto-fixes: the exact tree the reports are about. */
  commit: string;
  /** Per-test results of each tests gate's run of the suite on that tree (what seeds the next baseline once it lands). */
  tests: Map<string, TestResult[]>;
  /** What running failing tests again found, per tests gate that did (flaky tests left out of the verdict): for the ledger. */
  reruns: Reruns[];
  /** The packet itself is at fault: a planted case whose runs disagree. */
  defective?: string;
}

/**
 * Runs every gate, in order, all of them: fixers first (each fix committed on
 * its own, no attempt spent), then untouched, scope, tamper, and the
 * configured command gates; then the invariants' checks, the hidden tests,
 * and what the runs did to the installed packages.
 */
export async function runGates(ctx: RunContext, input: GateRunInput): Promise<GateRun> {
  const forbidden = [...ALWAYS_FORBIDDEN, ...input.packet.forbiddenPaths];
  await reduceToCommit(input.worktree);
  if (input.surface && !input.combined) await applyFixes(ctx, input, forbidden);
  const scene = await gateScene(input);
  const reports: GateReport[] = [...(input.combined ? input.combined.builtins : await builtins(ctx, input, scene, forbidden))];
  const runner = freshener(input.worktree, input.runDir);
  const configured = await configuredGates(ctx, input, scene, runner);
  reports.push(...configured.reports);
  reports.push(...(await invariantChecks(ctx, input, scene, runner)));
  reports.push(...(await hiddenTests(ctx, input, scene, runner)));
  if (configured.testsRan) await runner.freshen(); // what the last run changed among the installed packages counts too
  const dependencyChanged = runner.dependencyChanged();
  if (dependencyChanged) reports.push(dependenciesReport(dependencyChanged));
  for (const report of reports.slice(input.combined?.builtins.length ?? 0)) {
    ctx.emit({ kind: "gate", packet: input.packet.id, attempt: input.attempt, gate: report.name, status: report.status, summary: report.summary, durationMs: report.durationMs });
  }
  writeFileSync(join(input.runDir, `gates-${scene.commit.slice(0, 12)}.json`), JSON.stringify(reports, null, 2));
  return { reports, commit: scene.commit, tests: configured.tests, reruns: configured.reruns, ...(configured.defective ? { defective: configured.defective } : {}) };
}

/** What every gate of one run is judged on: the commit, its changes (and a batch's members'), the verdict tree. */
interface GateScene {
  commit: string;
  changes: Change[];
  verdict: Awaited<ReturnType<typeof verdictTreeFor>> | undefined;
  tree: VerdictTree | undefined;
  isTest: (path: string) => boolean;
  members: BatchMember[];
  memberChanges: Change[][];
  /** Paths the change (every member's) adds or modifies: a {files} gate's files. */
  changed: string[];
  /** Tests that go away with the change: retired by the packet's word, or in a deletable file the change deleted. */
  takenAway: string[];
  plantedCases: Readonly<Record<string, PlantedCases>>;
}

async function gateScene(input: GateRunInput): Promise<GateScene> {
  const { packet, surface } = input;
  const commit = await headOf(input.worktree);
  const changes = await changedPaths(input.worktree, input.plantedCommit, input.combined?.agentCommit ?? commit);
  // The team's and the planted tests judge the verdict tree: the tip's material, the change's source (loop/verdict-tree.ts).
  const verdict =
    surface && !input.combined && !input.also?.length
      ? await verdictTreeFor({ worktree: input.worktree, from: input.plantedCommit, surface, changes, baseline: input.baseline, tipReads: input.tipReads, packet, planted: input.planted })
      : undefined;
  const isTest = (path: string): boolean => isTestByFacts(verdict?.facts ?? NO_TEST_FACTS, path);
  const members: BatchMember[] = [{ packet, plantedCommit: input.plantedCommit, plantedCases: input.plantedCases, agentCommit: input.combined?.agentCommit ?? commit }, ...(input.also ?? [])];
  const memberChanges = [changes, ...(await Promise.all((input.also ?? []).map((member) => changedPaths(input.worktree, member.plantedCommit, member.agentCommit))))];
  const changed = [
    ...new Set(
      memberChanges
        .flat()
        .filter((change) => change.kind !== "deleted")
        .map((change) => change.path),
    ),
  ];
  // A deletable file the change deleted takes its tests with it; retired tests go by the packet's word.
  const takenAway = members.flatMap((member, index) => [
    ...member.packet.retiredTests,
    ...(memberChanges[index] ?? []).filter((change) => change.kind === "deleted" && matchesAny(change.path, member.packet.deletablePaths)).map((change) => change.path),
  ]);
  const plantedCases = input.also?.length ? mergePlantedCases(members.map((member) => member.plantedCases)) : input.plantedCases;
  return { commit, changes, verdict, tree: verdict?.tree, isTest, members, memberChanges, changed, takenAway, plantedCases };
}

/** The built-in gates (untouched, scope, tamper, changed) on the attempt's own change. */
async function builtins(ctx: RunContext, input: GateRunInput, scene: GateScene, forbidden: string[]): Promise<GateReport[]> {
  const { packet, surface } = input;
  const { verdict } = scene;
  return builtinReports({
    ...input,
    commit: scene.commit,
    changes: scene.changes,
    allowed: packet.allowedPaths,
    deletable: packet.deletablePaths,
    retired: packet.retiredTests,
    forbidden,
    maxFileSize: ctx.config.limits.maxFileSizeBytes,
    isTest: scene.isTest,
    changedTests: packet.changedTests,
    ...(verdict?.facts.doctestModules ? { doctests: doctestsAtTip(verdict.facts, input.baseline, (surface as Surface).dir) } : {}),
  });
}

/** Each tests run, and every gate after one, starts from the committed tree: nothing a run left steers the next. */
interface Freshener {
  freshen(): Promise<void>;
  /** The first installed package a run changed, if one did. */
  dependencyChanged(): string | undefined;
}

function freshener(worktree: string, runDir: string): Freshener {
  const runner = runnerState(worktree, join(runDir, "runner-state.log"));
  let changed: string | undefined;
  return {
    async freshen(): Promise<void> {
      const fresh = await runner.freshen();
      changed ??= fresh.dependencyChanged;
    },
    dependencyChanged: () => changed,
  };
}

interface ConfiguredRun {
  reports: GateReport[];
  tests: Map<string, TestResult[]>;
  reruns: Reruns[];
  defective: string | undefined;
  testsRan: boolean;
}

/** The surface's configured gates, in order: tests gates, whole-tree gates as the tip has them, {files} gates against the files before the change. */
async function configuredGates(ctx: RunContext, input: GateRunInput, scene: GateScene, runner: Freshener): Promise<ConfiguredRun> {
  const { packet, surface } = input;
  const { changed, changes, takenAway, plantedCases, tree, isTest } = scene;
  const out: ConfiguredRun = { reports: [], tests: new Map(), reruns: [], defective: undefined, testsRan: false };
  const reports = out.reports;
  let seedable = true;
  for (const gate of surface?.gates ?? []) {
    if (gate.tests) {
      out.testsRan = true;
      const ran = await runTestsGate(ctx, input, { gate, changed, changes, takenAway, plantedCases, tree, freshen: () => runner.freshen() });
      reports.push(...ran.reports);
      if (ran.reruns) out.reruns.push(ran.reruns);
      if (ran.results) out.tests.set(gate.name, ran.results);
      else seedable = false;
      out.defective ??= ran.defective;
      continue;
    }
    if (out.testsRan) await runner.freshen();
    if (!gate.run.includes("{files}") && !input.combined && !input.also?.length) {
      // A whole-tree gate's own script is the team's: it runs as the tip has it.
      const whole = await runAsAtTip(ctx, {
        gate,
        packet,
        surface: surface as Surface,
        worktree: input.worktree,
        runDir: input.runDir,
        from: input.plantedCommit,
        changes,
        planted: input.planted,
        changed,
        tree: undefined,
        isTest,
        before: async () => {},
        finishedOnBaseline: input.tipProven === true,
      });
      reports.push(
        whole.putBack.length > 0 ? { ...whole.report, summary: `${whole.report.summary} (run with the tip's ${whole.putBack.join(", ")}: the change edits the gate's own files)` } : whole.report,
      );
      continue;
    }
    const { report } = await runCommandGate({
      gate,
      surface: surface as Surface,
      worktree: input.worktree,
      changed,
      runDir: input.runDir,
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
      baseline: undefined,
      takenAway,
      // A whole-tree gate proven green on the tip finished there: a hang now is the work's.
      finishedOnBaseline: input.tipProven === true && !gate.run.includes("{files}"),
      signal: ctx.signal,
      ...sandboxed(ctx, input.worktree, (surface as Surface).network),
    });
    checkInterrupted(ctx.signal); // a gate killed by Ctrl-C says nothing about the work
    const judgedByFile = gate.run.includes("{files}");
    if (judgedByFile && report.status === "fail") reports.push(await againstBefore(ctx, input, gate, changed, report));
    else if (judgedByFile && report.hung) reports.push(await hangAgainstBefore(ctx, input, gate, changed, report));
    else reports.push(report);
  }
  if (!seedable) out.tests.clear(); // the verdict ran on material the landing does not hold: the next tip measures its own baseline
  return out;
}

/**
 * An invariant with a check is ruled by the factory: its command runs like a gate on the same tree, with its
 * own files (the script, the data beside it, the team's tests) as the tip has them.
 */
async function invariantChecks(ctx: RunContext, input: GateRunInput, scene: GateScene, runner: Freshener): Promise<GateReport[]> {
  const { packet, surface } = input;
  const reports: GateReport[] = [];
  const checks = surface ? scene.members.flatMap((member, index) => member.packet.invariants.map((invariant) => ({ invariant, member, changes: scene.memberChanges[index] ?? [] }))) : [];
  for (const { invariant, member, changes: its } of checks) {
    if (!invariant.check) continue;
    const check = { invariant: { ...invariant, check: invariant.check }, packet: member.packet, surface: surface as Surface, worktree: input.worktree, runDir: input.runDir };
    const itsPlanted = member.packet === packet ? input.planted : [];
    reports.push(
      await runInvariantCheck(ctx, {
        ...check,
        from: member.plantedCommit,
        changes: its,
        planted: itsPlanted,
        changed: scene.changed,
        tree: member.packet === packet ? scene.tree : undefined,
        isTest: scene.isTest,
        before: () => runner.freshen(),
      }),
    );
  }
  return reports;
}

/** The packet's hidden tests, last: copied into the verdict tree, run, and removed again. */
async function hiddenTests(ctx: RunContext, input: GateRunInput, scene: GateScene, runner: Freshener): Promise<GateReport[]> {
  const { surface } = input;
  const { tree } = scene;
  const reports: GateReport[] = [];
  for (const member of surface ? scene.members : []) {
    const hidden = holdoutFiles(ctx.root, member.packet.id);
    if (hidden.length === 0) continue;
    await runner.freshen();
    if (differs(tree)) await applyVerdictTree(input.worktree, input.plantedCommit, tree);
    const { report } = await runHoldout(ctx, { packet: member.packet, worktree: input.worktree, surface: surface as Surface, runDir: input.runDir, files: hidden });
    reports.push(input.also?.length ? { ...report, name: `holdout ${member.packet.id}` } : report);
  }
  return reports;
}

function dependenciesReport(dependencyChanged: string): GateReport {
  return {
    name: "dependencies",
    status: "fail",
    summary: `the code run by the gates changed the installed packages (${dependencyChanged}): a later run would load it`,
    findings: [{ file: dependencyChanged, message: "changed by a gate run; the install made it otherwise" }],
    durationMs: 0,
  };
}

/** Pure: the modules whose doctests the runner collected at the tip, and per module the docstrings (qualified names) whose doctest failed there. */
export function doctestsAtTip(facts: TestFacts, baseline: ReadonlyMap<string, TestResult[]>, surfaceDir: string): { modules: string[]; failing: Map<string, Set<string>> } {
  const modules = facts.collected.filter((file) => isDoctestModule(facts, file));
  const failing = new Map<string, Set<string>>();
  for (const result of [...baseline.values()].flat()) {
    if (result.outcome !== "failed") continue;
    const [file] = collectedFiles([result], modules, surfaceDir);
    if (!file) continue;
    const at = result.id.indexOf("::");
    const [module, name] = [result.id.slice(0, at), result.id.slice(at + 2)];
    const qualified = name === module ? "" : name.startsWith(`${module}.`) ? name.slice(module.length + 1) : name;
    failing.set(file, new Set([...(failing.get(file) ?? []), qualified]));
  }
  return { modules, failing };
}

/** Pure: the planted cases of several packets, per tests gate, as one packet's. */
export function mergePlantedCases(all: readonly Readonly<Record<string, PlantedCases>>[]): Record<string, PlantedCases> {
  const merged: Record<string, PlantedCases> = {};
  for (const cases of all) {
    for (const [gate, planted] of Object.entries(cases)) {
      const into = merged[gate] ?? { cases: [], files: [] };
      merged[gate] = {
        cases: [...into.cases, ...planted.cases],
        files: [...into.files, ...planted.files],
        ...(into.removed || planted.removed ? { removed: [...(into.removed ?? []), ...(planted.removed ?? [])] } : {}),
      };
    }
  }
  return merged;
}

export interface BuiltinInput {
  worktree: string;
  plantedCommit: string;
  commit: string;
  changes: Awaited<ReturnType<typeof changedPaths>>;
  planted: readonly string[];
  allowed: readonly string[] | undefined;
  deletable: readonly string[];
  /** The packet's retired_tests: the agent may remove these. */
  retired?: readonly string[];
  /** Including ALWAYS_FORBIDDEN. */
  forbidden: readonly string[];
  maxFileSize: number;
  surface: Surface | undefined;
  nested?: readonly string[] | undefined;
  /** What a test is by the runner at the tip; the conventional names without it. */
  isTest?: (path: string) => boolean;
  /** Source modules whose doctests the runner collects at the tip, and per module the docstrings whose doctests failed there. */
  doctests?: { modules: readonly string[]; failing: ReadonlyMap<string, ReadonlySet<string>> };
  /** The packet's changed_tests: a doctest rewritten there is declared. */
  changedTests?: readonly string[];
  /** The tip's files its tests read (traced), when known. */
  tipReads?: readonly string[] | undefined;
}

/** The factory's own guards on `plantedCommit..commit`: untouched, scope, tamper, and "changed" when nothing changed. */
export async function builtinReports(input: BuiltinInput): Promise<GateReport[]> {
  const { changes, commit } = input;
  // Reads of two commits by id: they run at once.
  const [before, after, tamperDiff] = await Promise.all([
    listTree(input.worktree, input.plantedCommit),
    listTree(input.worktree, commit),
    diffText(input.worktree, input.plantedCommit, commit, { context: 0, text: true }),
  ]);
  const reports = [checkUntouched({ before, after, planted: input.planted, forbidden: input.forbidden })];
  const added = parseUnifiedDiff(tamperDiff).filter((file) => !input.planted.includes(file.path));
  const links = new Map<string, string>();
  for (const change of changes) {
    if (after.get(change.path)?.mode !== "120000") continue;
    links.set(change.path, (await readFileAt(input.worktree, commit, change.path)) ?? "");
  }
  reports.push(
    checkScope({
      changes,
      allowed: input.allowed,
      deletable: input.deletable,
      planted: input.planted,
      links,
      sizes: new Map([...after].map(([path, entry]) => [path, entry.size])),
      modes: new Map([...after].map(([path, entry]) => [path, entry.mode])),
      ...(input.nested ? { nested: input.nested } : {}),
      maxFileSize: input.maxFileSize,
      added,
    }),
  );
  reports.push(await tamperReport(input, commit, tamperDiff));
  const signatures = await signaturesReport(input, commit, added);
  if (signatures) reports.push(signatures);
  const archived = exportIgnoredReport(added, [...after.keys()], input.tipReads);
  if (archived) reports.push(archived);
  if (changes.length === 0) reports.push({ name: "changed", status: "fail", summary: "the attempt changed nothing", findings: [], durationMs: 0 });
  return reports;
}

/**
 * A lint or format gate that failed on the changed files is run again on the
 * same files as they were before the change (written into the worktree for
 * the run, then restored): only findings the change brought fail it, so a
 * file's existing findings never block a packet that touches it.
 */
async function againstBefore(ctx: RunContext, input: GateRunInput, gate: GateConfig, changed: readonly string[], report: GateReport): Promise<GateReport> {
  const files = surfaceFiles(input.surface as Surface, gate.files, changed);
  const now = readLog(join(input.runDir, `gate-${gate.name}.log`));
  const then = await runOnBefore(ctx, input, gate, files);
  if (!then) return withFindings(report, newFindings({ now, before: "", files }), files); // every file is new: every finding is the change's
  if (then.status !== "pass" && then.status !== "fail") return report;
  const fresh = newFindings({ now, before: readLog(join(input.runDir, `gate-${then.name}.log`)), files });
  if (fresh.length > 0) return withFindings(report, fresh, files);
  return { ...report, status: "pass", summary: "its findings in the changed files were all there before this change" };
}

/**
 * A `{files}` gate that hung or was killed on the change: run on the same files as they were before it
 * (the planted commit's versions). Finished there, the hang is the change's doing, and the work's
 * failure; hanging there too, or with every file new, it stays the environment's.
 */
async function hangAgainstBefore(ctx: RunContext, input: GateRunInput, gate: GateConfig, changed: readonly string[], report: GateReport): Promise<GateReport> {
  const then = await runOnBefore(ctx, input, gate, surfaceFiles(input.surface as Surface, gate.files, changed));
  if (then?.status !== "pass" && then?.status !== "fail") return report;
  const { hung: _, ...rest } = report;
  return { ...rest, status: "fail", summary: `${report.summary} on this change; on the same files before it, it finished, so the change hangs or crashes it` };
}

/**
 * Runs `gate` on the versions before the change (at the planted commit) of those of `files` that
 * existed then, in the worktree, which is restored afterwards; undefined when every file is new.
 */
async function runOnBefore(ctx: RunContext, input: GateRunInput, gate: GateConfig, files: readonly string[]): Promise<GateReport | undefined> {
  const surface = input.surface as Surface;
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  const before = new Map<string, string>();
  for (const file of files) {
    const text = await readFileAt(input.worktree, input.plantedCommit, `${prefix}${file}`);
    if (text !== undefined) before.set(file, text);
  }
  if (before.size === 0) return undefined;
  for (const [file, text] of before) writeFileSync(join(input.worktree, prefix, file), text);
  let report: GateReport;
  try {
    ({ report } = await runCommandGate({
      gate: { ...gate, name: `${gate.name} (before the change)` },
      surface,
      worktree: input.worktree,
      changed: [...before.keys()].map((file) => `${prefix}${file}`),
      runDir: input.runDir,
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
      baseline: undefined,
      signal: ctx.signal,
      ...sandboxed(ctx, input.worktree, surface.network),
    }));
  } finally {
    await restoreWorktree(input.worktree);
  }
  checkInterrupted(ctx.signal);
  return report;
}

/** A failed `{files}` gate's report naming the findings this change brought (the first in its summary); as it was when none is recognised. */
function withFindings(report: GateReport, fresh: readonly string[], files: readonly string[] = []): GateReport {
  if (fresh.length === 0) return report;
  return {
    ...report,
    summary: `${fresh.length} new finding(s) in the changed files: ${fresh[0]}`,
    findings: fresh.map((message) => ({ file: files.find((file) => message.includes(file)) ?? "", message })),
  };
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

async function applyFixes(ctx: RunContext, input: GateRunInput, forbidden: string[]): Promise<void> {
  const surface = input.surface as Surface;
  for (const gate of surface.gates) {
    if (!gate.fix) continue;
    const head = await headOf(input.worktree);
    const changed = (await changedPaths(input.worktree, input.plantedCommit, head))
      .filter((change) => change.kind !== "deleted" && !input.planted.includes(change.path) && !matchesAny(change.path, forbidden))
      .map((change) => change.path);
    const files = surfaceFiles(surface, gate.files, changed);
    if (gate.fix.includes("{files}") && files.length === 0) continue;
    await runCommand({
      command: gate.fix.replaceAll("{files}", files.map(shellQuote).join(" ")),
      cwd: join(input.worktree, surface.dir),
      env: baseEnv(),
      timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
      logFile: join(input.runDir, `fix-${gate.name}.log`),
      signal: ctx.signal,
      ...sandboxed(ctx, input.worktree, surface.network),
    });
    const fixed = await commitWorktree(input.worktree, `factory: auto-fix (${gate.name}) for ${input.packet.id}`, AGENT_OUTPUTS);
    if (fixed !== head) ctx.emit({ kind: "step", packet: input.packet.id, attempt: input.attempt, step: `auto-fix ${gate.name}`, detail: `committed ${fixed.slice(0, 10)}` });
  }
}

/**
 * An `export-ignore` the change adds on a file the tests read (guards/export-ignore.ts): `git archive` of the
 * target would not hold what the gates tested. The tests' reads at the tip name such files; without them, any
 * tracked source file. A person rules on it.
 */
function exportIgnoredReport(added: ReturnType<typeof parseUnifiedDiff>, tracked: readonly string[], tipReads: readonly string[] | undefined): GateReport | undefined {
  const read = tipReads ? new Set(tipReads) : undefined;
  const found = exportIgnoredReads(added, tracked, (path) => (read ? read.has(path) : isCodeFile(path)));
  if (found.length === 0) return undefined;
  const findings = found.map((entry) => ({
    file: entry.file,
    line: entry.line,
    message: `leaves out of \`git archive\` ${entry.read.slice(0, 3).join(", ")}${entry.read.length > 3 ? `, and ${entry.read.length - 3} more` : ""}, which the tests read`,
  }));
  const first = findings[0] as Finding;
  const where = `${first.file}:${first.line}: ${first.message}`;
  return {
    name: "archive",
    status: "pass",
    summary: where,
    findings,
    durationMs: 0,
    forPerson: `${where}: an archive of the target would differ from the tree the gates tested; a person rules on it`,
  };
}

/**
 * Code that knows it is being tested (guards/cheat-signatures.ts): a report only when the change has some,
 * passing (the tests may pass for the wrong reason; that is for a person to rule), with each line named.
 */
async function signaturesReport(input: Pick<BuiltinInput, "worktree" | "isTest">, commit: string, files: ReturnType<typeof parseUnifiedDiff>): Promise<GateReport | undefined> {
  const isTest = input.isTest ?? isTestPath;
  const python = new Map<string, string>();
  for (const file of files) {
    if (file.isDeleted || !file.path.endsWith(".py") || isTest(file.path)) continue;
    const text = await readFileAt(input.worktree, commit, file.path);
    if (text !== undefined) python.set(file.path, text);
  }
  const findings = cheatSignatures({ files, python, isTest });
  if (findings.length === 0) return undefined;
  const first = findings[0];
  const where = first ? `${first.file}${first.line ? `:${first.line}` : ""}: ${first.message}` : "";
  return {
    name: "signatures",
    status: "pass",
    summary: `${where}${findings.length > 1 ? ` (and ${findings.length - 1} more)` : ""}`,
    findings,
    durationMs: 0,
    forPerson: `the change has code that knows it is being tested (${where}${findings.length > 1 ? `, and ${findings.length - 1} more` : ""}): a person rules whether it passes its tests for the right reason`,
  };
}

/** The doctests the change rewrote or removed in the modules whose doctests the runner collects at the tip, but for what the packet declares. */
async function doctestFindings(input: Pick<BuiltinInput, "worktree" | "plantedCommit" | "doctests" | "changedTests">, commit: string, files: ReturnType<typeof parseUnifiedDiff>): Promise<Finding[]> {
  const modules = input.doctests?.modules ?? [];
  const edited = files.filter((file) => !file.isNew && modules.includes(file.oldPath) && !matchesAny(file.oldPath, input.changedTests ?? []));
  if (edited.length === 0) return [];
  const texts = await Promise.all(
    edited.flatMap((file) => [readFileAt(input.worktree, input.plantedCommit, file.oldPath), file.isDeleted ? Promise.resolve("") : readFileAt(input.worktree, commit, file.path)]),
  );
  const examples = doctestExamples(texts);
  return edited.flatMap((file, index) => {
    const [before, after] = [examples[2 * index], examples[2 * index + 1]];
    return before && after ? rewrittenDoctests(file.path, before, after, input.doctests?.failing.get(file.oldPath)) : [];
  });
}

/** `diff`: plantedCommit..commit with no context lines. */
async function tamperReport(
  input: Pick<BuiltinInput, "worktree" | "plantedCommit" | "allowed" | "surface" | "deletable" | "retired" | "isTest" | "doctests" | "changedTests">,
  commit: string,
  diff: string,
): Promise<GateReport> {
  const isTest = input.isTest ?? isTestPath;
  const files = parseUnifiedDiff(diff);
  const sections = new Map<string, { added: Set<number>; removed: Set<number> }>();
  for (const file of files) {
    if (!/(^|\/)(pyproject\.toml|setup\.cfg|tox\.ini)$/.test(file.path)) continue;
    sections.set(file.path, {
      added: pytestSectionLines(
        await readFileAt(input.worktree, commit, file.path),
        file.added.map((line) => line.line),
      ),
      removed: pytestSectionLines(
        await readFileAt(input.worktree, input.plantedCommit, file.path),
        file.removed.map((line) => line.line),
      ),
    });
  }
  // Python test files the change edits are parsed on both sides: what each test asserts, and when.
  // JavaScript and TypeScript ones by TypeScript's parser, in this process.
  const edited = files.filter((file) => !file.isNew && !file.isDeleted && isTest(file.path) && (file.path.endsWith(".py") || isJsFile(file.path)));
  const texts = await Promise.all(edited.map(async (file) => [await readFileAt(input.worktree, input.plantedCommit, file.oldPath), await readFileAt(input.worktree, commit, file.path)] as const));
  const python = edited.flatMap((file, index) => (file.path.endsWith(".py") ? [index] : []));
  const pythonFacts = pythonAssertFacts(python.flatMap((index) => texts[index] ?? []));
  const assertFacts = new Map(
    edited.map((file, index) => {
      const at = python.indexOf(index);
      const [before, after] = texts[index] ?? [undefined, undefined];
      return [file.path, at >= 0 ? { before: pythonFacts[2 * at], after: pythonFacts[2 * at + 1] } : { before: jsAssertFacts(file.oldPath, before), after: jsAssertFacts(file.path, after) }];
    }),
  );
  // New Python modules are checked against the tree they were added to, for one shadowing a project module.
  const tipFiles = files.some((file) => (file.isNew && file.path.endsWith(".py")) || file.isSymlink) ? await listTreeFiles(input.worktree, input.plantedCommit, ".") : undefined;
  return checkTamper({
    files,
    allowed: input.allowed,
    ...(tipFiles ? { tipFiles } : {}),
    assertFacts,
    deletable: input.deletable,
    retired: input.retired ?? [],
    pytestSectionLines: sections,
    isTest,
    more: await doctestFindings(input, commit, files),
    ...(input.surface ? { surfaceDir: input.surface.dir } : {}),
  });
}
