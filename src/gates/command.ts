import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { baseEnv, describeOutcome, type RunOutcome, runCommand } from "../process/run.js";
import type { SandboxRequest } from "../process/sandbox.js";
import { tracedCommand, tracedReads, tracer, untraceable } from "../process/trace.js";
import { formatDuration } from "../util/duration.js";
import { formatSize } from "../util/size.js";
import { describeFlaky, type RerunVerdict } from "./flaky.js";
import { normalizeResults, parseJunit, type TestResult } from "./junit.js";
import { matchesAny, shellQuote } from "./paths.js";
import { reportDisagreement, runnerSummaries } from "./runner-summary.js";
import { parseTap } from "./tap.js";
import { checkPlanted, compareWithBaseline, namedBy, type PlantedCases, type PlantedFindings, realCases, type TestComparison } from "./test-compare.js";
import type { Finding, GateReport } from "./types.js";

export interface CommandGateInput {
  gate: GateConfig;
  surface: Surface;
  worktree: string;
  /** Changed (not deleted) repository paths, for {files}. */
  changed: readonly string[];
  runDir: string;
  timeoutMs: number;
  /** Per-test results at the baseline; undefined while measuring the baseline itself. */
  baseline: readonly TestResult[] | undefined;
  /** The planted cases this gate must now see pass. */
  planted?: PlantedCases;
  /** Tests the packet takes away (`path::name` or a file's path): retired, or in a deletable file the change deleted. Missing is no regression. */
  takenAway?: readonly string[];
  /** The gate finished on the baseline: a hang or kill now is the work's failure, not the environment's. */
  finishedOnBaseline?: boolean;
  /** For `{tests}`: the test files to run, relative to the surface dir; undefined: "" (the runner's own selection, the whole suite), or the default `{tests|test/}` names. */
  tests?: readonly string[];
  signal?: AbortSignal;
  /** Where the gate runs; its report directory is added to the writable places. */
  sandbox?: SandboxRequest;
  /** Trace the files the run opens (process/trace.ts): `reads` in the result, when this machine has strace. */
  trace?: boolean;
}

export interface CommandGateResult {
  report: GateReport;
  /** Per-test results of a tests = true gate (repository-relative ids), when its JUnit report could be read. */
  results?: TestResult[];
  exitCode?: number;
  /** What a tests gate's verdict was made of: judged again once its failing tests were rerun. */
  judged?: Judged;
  /** Traced (`trace`): the worktree's files the run opened for reading or executed, relative to it. */
  reads?: string[];
}

/** The files of one surface for `{files}`: changed, inside the surface dir, matching the gate's glob; relative to the dir. */
export function surfaceFiles(surface: Surface, glob: string | undefined, changed: readonly string[]): string[] {
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  return changed
    .filter((path) => path.startsWith(prefix))
    .map((path) => path.slice(prefix.length))
    .filter((path) => glob === undefined || matchesAny(path, [glob]));
}

/**
 * `{tests}`, or `{tests|DEFAULT}`: the planted test files when they run on
 * their own, else nothing (the runner's own selection) or DEFAULT, as written
 * (for runners that need paths, such as `node --test {tests|test/}`).
 */
export const TESTS_PLACEHOLDER = /\{tests(?:\|([^}]*))?\}/g;

/** The longest command line a gate runs at once: `sh -c` gets it as one argument, which Linux caps at 128 KiB. */
export const MAX_COMMAND_BYTES = 100_000;

export async function runCommandGate(input: CommandGateInput): Promise<CommandGateResult> {
  const { gate, surface } = input;
  const files = surfaceFiles(surface, gate.files, input.changed);
  if (gate.run.includes("{files}") && files.length === 0) {
    return { report: { name: gate.name, status: "skipped", summary: "no changed files for {files}", findings: [], durationMs: 0 } };
  }
  // The report directory is the only place outside the worktree a gate may write.
  // {junit} or {tap}: the runner's per-test report, JUnit XML or TAP (ava's), read as what it holds.
  const junit = join(input.runDir, "reports", gate.run.includes("{tap}") ? `tap-${gate.name}.tap` : `junit-${gate.name}.xml`);
  mkdirSync(dirname(junit), { recursive: true });
  const commandFor = (batch: readonly string[]): string =>
    gate.run
      .replaceAll("{files}", batch.map(shellQuote).join(" "))
      .replace(TESTS_PLACEHOLDER, (_match, fallback: string | undefined) => (input.tests?.length ? input.tests.map(shellQuote).join(" ") : (fallback ?? "")))
      .replaceAll("{junit}", shellQuote(junit))
      .replaceAll("{tap}", shellQuote(junit));
  // Too many changed files for one command line: the gate runs once per batch, and fails if any batch does.
  const batches = gate.run.includes("{files}") ? batchesOf(files, MAX_COMMAND_BYTES - commandFor([]).length) : [files];
  const note = (report: GateReport, index: number): GateReport => (batches.length > 1 ? { ...report, summary: `${report.summary} (batch ${index + 1} of ${batches.length})` } : report);
  let ran: Ran | undefined;
  const results: TestResult[] = [];
  const strace = input.trace ? tracer() : undefined;
  const traceFile = strace ? join(dirname(junit), `trace-${gate.name.replace(/[^\w.-]+/g, "_")}.txt`) : undefined;
  let reads: Set<string> | undefined = strace ? new Set<string>() : undefined;
  for (const [index, batch] of batches.entries()) {
    const run = await runBatch(input, commandFor(batch), junit, strace && traceFile ? { strace, file: traceFile } : undefined);
    if (run.reads === undefined) reads = undefined; // a batch not traced: what the run read is not known
    for (const path of run.reads ?? []) reads?.add(path);
    if (run.kind === "ended") return { report: note(run.report, index) };
    if (!gate.tests && run.base.exitCode !== 0) return { report: note(exitReport(run.base), index), ...traced(reads) };
    results.push(...run.results);
    ran = ran && ran.base.exitCode !== 0 ? ran : run; // the first batch that failed speaks for the exit
  }
  const { base } = ran as Ran;
  if (!gate.tests) return { report: exitReport(base), ...traced(reads) };
  const exitCode = base.exitCode;
  // Measuring (a baseline, the planted check): the caller judges the raw results.
  if (input.baseline === undefined) {
    return { report: { ...base, status: exitCode === 0 ? "pass" : "fail", summary: `${results.length} test(s), exit ${exitCode}`, findings: [] }, results, exitCode, ...traced(reads) };
  }
  const judged: Judged = { base, exitCode, results, baseline: input.baseline, planted: input.planted, takenAway: input.takenAway ?? [], surfaceDir: surface.dir };
  return { report: judgeTests(judged), results, exitCode, judged, ...traced(reads) };
}

/** `{ reads }` when the run was traced. */
function traced(reads: ReadonlySet<string> | undefined): { reads?: string[] } {
  return reads ? { reads: [...reads].sort() } : {};
}

/** The largest trace read: a run that opens a million files writes about 150 MB of it. */
const MAX_TRACE_BYTES = 256 * 1024 ** 2;

/**
 * The worktree's files a traced run read, from its trace file (removed once read); "not-run" when there is none
 * or it is empty (strace writes at least the command's own start: refused, it runs nothing); "unknown" when it
 * is too large to read or not a regular file.
 */
function readTrace(file: string, worktree: string, cwd: string): string[] | "not-run" | "unknown" {
  try {
    const stat = lstatSync(file);
    if (stat.isFile() && stat.size === 0) return "not-run";
    if (!stat.isFile() || stat.size > MAX_TRACE_BYTES) return "unknown";
    return tracedReads(readFileSync(file, "utf8"), worktree, cwd);
  } catch {
    return "not-run";
  } finally {
    rmSync(file, { force: true });
  }
}

function exitReport(base: Ran["base"]): GateReport {
  return { ...base, status: base.exitCode === 0 ? "pass" : "fail", summary: base.exitCode === 0 ? "passed" : `failed (exit ${base.exitCode})`, findings: [] };
}

/** Pure: `files` in runs whose quoted, space-joined length stays within `room` bytes (a file longer than that alone). */
export function batchesOf(files: readonly string[], room: number): string[][] {
  const batches: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const file of files) {
    const size = Buffer.byteLength(shellQuote(file)) + 1;
    if (current.length > 0 && used + size > room) {
      batches.push(current);
      current = [];
      used = 0;
    }
    current.push(file);
    used += size;
  }
  batches.push(current);
  return batches;
}

type Ran = { kind: "ran"; base: Pick<GateReport, "name" | "command" | "durationMs" | "tail"> & { exitCode: number }; results: TestResult[]; reads?: string[] };

/**
 * One run of a gate's command (one batch of `{files}`): how it ended, and for a tests gate its report,
 * read and checked against what the runner printed.
 */
async function runBatch(input: CommandGateInput, command: string, junit: string, trace?: { strace: string; file: string }): Promise<{ kind: "ended"; report: GateReport; reads?: string[] } | Ran> {
  const { gate, surface } = input;
  rmSync(junit, { force: true });
  if (trace) rmSync(trace.file, { force: true });
  const outcome = await runCommand({
    command: trace ? tracedCommand(trace.strace, command, trace.file) : command,
    ...(trace ? { wraps: command } : {}),
    cwd: join(input.worktree, surface.dir),
    env: baseEnv(),
    timeoutMs: input.timeoutMs,
    logFile: join(input.runDir, `gate-${gate.name}.log`),
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.sandbox ? { sandbox: { ...input.sandbox, writable: [...input.sandbox.writable, dirname(junit)] } } : {}),
  });
  const traceRead = trace ? readTrace(trace.file, input.worktree, join(input.worktree, surface.dir)) : "unknown";
  if (traceRead === "not-run" && outcome.kind !== "aborted") {
    // strace could not trace here (ptrace refused inside the sandbox): the command never ran under it. Run as it is.
    untraceable();
    return runBatch(input, command, junit);
  }
  const base = { name: gate.name, command, durationMs: outcome.durationMs, ...("tail" in outcome ? { tail: outcome.tail } : {}) };
  const reads = Array.isArray(traceRead) ? traceRead : undefined;
  const ran = (result: Omit<Ran, "reads">): Ran => (reads ? { ...result, reads } : result);
  const ended = endOf(outcome, input.timeoutMs);
  if (ended.kind === "environment") return { kind: "ended", report: { ...base, status: "error", summary: ended.summary, findings: [] } };
  if (ended.kind === "hung") {
    // It finished on the baseline, so a hang or a kill now is the candidate's doing.
    if (input.finishedOnBaseline)
      return { kind: "ended", report: { ...base, status: "fail", summary: `${ended.summary} on this change; it finished on the baseline, so the change hangs or crashes it`, findings: [] } };
    return { kind: "ended", report: { ...base, status: "error", summary: ended.summary, findings: [], hung: true } };
  }
  const exitCode = ended.code;
  if (!gate.tests) return ran({ kind: "ran", base: { ...base, exitCode }, results: [] });
  const read = readReport(junit, input.worktree);
  if (!read.ok) {
    // Measuring, no report is the toolchain's problem; judging, the same runner wrote one on the baseline, so it is the change's.
    if (input.baseline === undefined) return { kind: "ended", report: { ...base, exitCode, status: "error", summary: `${read.problem} (exit ${exitCode})`, findings: [] } };
    return { kind: "ended", report: { ...base, exitCode, status: "fail", summary: `${read.problem} (exit ${exitCode}); it did on the baseline`, findings: [] } };
  }
  // The report is a file the code under test could rewrite: it must agree with what the runner printed.
  if (input.baseline !== undefined) {
    const printed = "stdout" in outcome ? `${outcome.stdout}\n${outcome.stderr}` : "";
    const failing = read.results.filter((result) => result.outcome === "failed").length;
    const disagreement = reportDisagreement(runnerSummaries(printed), failing, read.results.length);
    if (disagreement) return { kind: "ended", report: { ...base, exitCode, status: "fail", summary: disagreement, findings: [] } };
  }
  return ran({ kind: "ran", base: { ...base, exitCode }, results: read.results });
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

type Read = { ok: true; results: TestResult[] } | { ok: false; problem: string };

/** The largest JUnit report read: the code under test can write there, and a report is read whole. */
export const MAX_REPORT_BYTES = 64 * 1024 ** 2;

function readReport(junit: string, worktree: string): Read {
  // A {tap} gate's report is TAP, by the gate's own declaration (never guessed from what the file holds).
  const tap = junit.endsWith(".tap");
  if (!existsSync(junit) && !isLink(junit))
    return { ok: false, problem: `wrote no ${tap ? "TAP report to {tap}" : "JUnit report to {junit}"}: the test runner did not run or is not configured to report` };
  // Not followed, and sized first: the code under test can write the report directory (a FIFO would hang the factory).
  const stat = lstatSync(junit);
  if (!stat.isFile()) return { ok: false, problem: "its JUnit report is not a regular file (a link, FIFO or device); it was not read" };
  if (stat.size > MAX_REPORT_BYTES) return { ok: false, problem: `its JUnit report is ${formatSize(stat.size)}, over ${formatSize(MAX_REPORT_BYTES)}; it was not read` };
  const text = readFileSync(junit, "utf8");
  if (tap) return { ok: true, results: normalizeResults(parseTap(text), worktree) };
  const parsed = parseJunit(text);
  if (!parsed.ok) return { ok: false, problem: `its JUnit report cannot be read: ${parsed.detail}` };
  return { ok: true, results: normalizeResults(parsed.results, worktree) };
}

export interface Judged {
  base: Pick<GateReport, "name" | "command" | "durationMs" | "tail">;
  exitCode: number;
  results: readonly TestResult[];
  baseline: readonly TestResult[];
  planted: PlantedCases | undefined;
  takenAway?: readonly string[];
  surfaceDir: string;
  /** What running the failing tests again found (gates/flaky.ts): flaky ones are left out, the rest say what the reruns saw. */
  reruns?: RerunVerdict;
}

/** Pure: the planted findings and the comparison with the baseline a tests gate's verdict is made of. */
function compareJudged(input: Judged): PlantedFindings & { comparison: TestComparison } {
  const planted = input.planted ?? { cases: [], files: [] };
  const checked = checkPlanted({ planted, surfaceDir: input.surfaceDir, baseline: input.baseline, now: input.results });
  const removed = new Set(planted.removed ?? []);
  const takenAway = input.takenAway ?? [];
  const excused = new Set([...checked.covered, ...(input.reruns?.flaky.map((test) => test.id) ?? [])]);
  const comparison = compareWithBaseline(input.baseline, input.results, excused, (id) => removed.has(id) || namedBy(id, takenAway, input.surfaceDir));
  return { ...checked, comparison };
}

/** Pure: the tests a failed tests gate runs again: those that passed at the baseline and fail now (not planted cases: never excused). */
export function rerunTargets(input: Judged): string[] {
  return compareJudged(input)
    .comparison.regressions.filter((regression) => regression.now === "failed")
    .map((regression) => regression.id);
}

/** Pure: a tests gate's verdict on the candidate, per test, against the baseline and the planted cases. */
export function judgeTests(input: Judged): GateReport {
  const { base, exitCode, results } = input;
  const cases = realCases(results);
  const fail = (summary: string, findings: Finding[] = []): GateReport => ({ ...base, exitCode, status: "fail", summary, findings });
  if (cases.length === 0) return fail(results.length ? `ran zero tests: the runner could not collect ${results.map((r) => r.id).join(", ")}` : "ran zero tests");
  if (exitCode !== 0 && !cases.some((result) => result.outcome === "failed")) {
    return fail(`the runner exited ${exitCode} but its report shows no failing test (a collection error, an interruption or a crash); see its last lines`);
  }
  const { findings: plantedFindings, unchecked, comparison } = compareJudged(input);
  const skippedBefore = new Set(input.baseline.filter((result) => result.outcome === "skipped").map((result) => result.id));
  const rerunSaid = new Map(input.reruns?.regressions.map((regression) => [regression.id, regression.message]));
  const flaky = input.reruns?.flaky ?? [];
  const findings: Finding[] = [
    ...plantedFindings.map((finding) => ({ file: finding.id, message: finding.message })),
    ...comparison.regressions.map((regression) => ({
      file: regression.id,
      message: rerunSaid.get(regression.id) ?? `passed at the baseline and ${regression.now === "failed" ? "fails" : `is ${regression.now}`} now`,
    })),
    ...comparison.newFailures.map((id) => ({ file: id, message: skippedBefore.has(id) ? "was skipped at the baseline and fails now" : "fails (a new test)" })),
  ];
  const reasons = [...new Set(unchecked.map((entry) => entry.reason || "no reason given"))];
  const notBlamed = `${comparison.preexisting.length ? `; ${comparison.preexisting.length} already failing at the baseline (not blamed)` : ""}${
    unchecked.length ? `; ${unchecked.length} planted case(s) skipped here before and after the work, not checked on this machine (${reasons.join("; ")})` : ""
  }${flaky.length ? `; left out: ${flaky.map(describeFlaky).join("; ")}` : ""}`;
  if (findings.length > 0) {
    const counts = [
      plantedFindings.length ? `${plantedFindings.length} planted test(s) not passing` : "",
      comparison.regressions.length ? `${comparison.regressions.length} regression(s)` : "",
      comparison.newFailures.length ? `${comparison.newFailures.length} new test(s) failing` : "",
    ]
      .filter(Boolean)
      .join(", ");
    return fail(`${counts} of ${comparison.total}${notBlamed}`, findings);
  }
  return { ...base, exitCode, status: "pass", summary: `${comparison.passed}/${comparison.total} passed${notBlamed}`, findings: [] };
}

type Ended = { kind: "exited"; code: number } | { kind: "environment"; summary: string } | { kind: "hung"; summary: string };

/** How the command ended: the toolchain's fault (cannot start, missing), a hang or kill (whose fault depends on the baseline), or an exit. */
function endOf(outcome: RunOutcome, timeoutMs: number): Ended {
  switch (outcome.kind) {
    case "spawn-error":
      return { kind: "environment", summary: `could not start: ${outcome.message}` };
    case "aborted":
      return { kind: "environment", summary: describeOutcome(outcome) };
    case "timed-out":
      return { kind: "hung", summary: `timed out after ${formatDuration(timeoutMs)}` };
    case "stalled":
    case "signalled":
      return { kind: "hung", summary: describeOutcome(outcome) };
    case "exited":
      if (outcome.code === 127) return { kind: "environment", summary: "command not found (exit 127): is the tool installed?" };
      if (outcome.code === 126) return { kind: "environment", summary: "command not executable (exit 126)" };
      return { kind: "exited", code: outcome.code };
  }
}
