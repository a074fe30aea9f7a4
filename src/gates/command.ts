import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { baseEnv, describeOutcome, runCommand, type RunOutcome } from "../process/run.js";
import { formatDuration } from "../util/duration.js";
import { compareWithBaseline, parseJunit, type TestResult } from "./junit.js";
import { matchesAny, shellQuote } from "./paths.js";
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
  signal?: AbortSignal;
}

export interface CommandGateResult {
  report: GateReport;
  /** Per-test results of a tests = true gate, when its JUnit report could be read. */
  results?: TestResult[];
}

/** The files of one surface for `{files}`: changed, inside the surface dir, matching the gate's glob; relative to the dir. */
export function surfaceFiles(surface: Surface, glob: string | undefined, changed: readonly string[]): string[] {
  const prefix = surface.dir === "." ? "" : `${surface.dir}/`;
  return changed
    .filter((path) => path.startsWith(prefix))
    .map((path) => path.slice(prefix.length))
    .filter((path) => glob === undefined || matchesAny(path, [glob]));
}

export async function runCommandGate(input: CommandGateInput): Promise<CommandGateResult> {
  const { gate, surface } = input;
  const files = surfaceFiles(surface, gate.files, input.changed);
  if (gate.run.includes("{files}") && files.length === 0) {
    return { report: { name: gate.name, status: "skipped", summary: "no changed files for {files}", findings: [], durationMs: 0 } };
  }
  const junit = join(input.runDir, `junit-${gate.name}.xml`);
  rmSync(junit, { force: true });
  const command = gate.run.replaceAll("{files}", files.map(shellQuote).join(" ")).replaceAll("{junit}", shellQuote(junit));
  const outcome = await runCommand({
    command,
    cwd: join(input.worktree, surface.dir),
    env: baseEnv(),
    timeoutMs: input.timeoutMs,
    logFile: join(input.runDir, `gate-${gate.name}.log`),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  const base = { name: gate.name, command, durationMs: outcome.durationMs, ...("tail" in outcome ? { tail: outcome.tail } : {}) };
  const environmental = environmentError(outcome, input.timeoutMs);
  if (environmental) return { report: { ...base, status: "error", summary: environmental, findings: [] } };
  const exitCode = outcome.kind === "exited" ? outcome.code : -1;
  if (!gate.tests) {
    return {
      report: { ...base, exitCode, status: exitCode === 0 ? "pass" : "fail", summary: exitCode === 0 ? "passed" : `failed (exit ${exitCode})`, findings: [] },
    };
  }
  if (!existsSync(junit)) {
    return { report: { ...base, exitCode, status: "error", summary: `wrote no JUnit report to {junit} (exit ${exitCode}): the test runner did not run or is not configured to report`, findings: [] } };
  }
  const parsed = parseJunit(readFileSync(junit, "utf8"));
  if (!parsed.ok) return { report: { ...base, exitCode, status: "error", summary: `its JUnit report cannot be read: ${parsed.detail}`, findings: [] } };
  const results = parsed.results;
  if (results.length === 0) return { report: { ...base, exitCode, status: "fail", summary: "ran zero tests", findings: [] }, results };
  if (input.baseline === undefined) {
    return { report: { ...base, exitCode, status: exitCode === 0 ? "pass" : "fail", summary: `${results.length} test(s), exit ${exitCode}`, findings: [] }, results };
  }
  const comparison = compareWithBaseline(input.baseline, results);
  const findings: Finding[] = [
    ...comparison.regressions.map((id) => ({ file: id, message: "passed at the baseline and fails now" })),
    ...comparison.newFailures.map((id) => ({ file: id, message: "fails (a new or planted test)" })),
  ];
  const notBlamed = comparison.preexisting.length ? `; ${comparison.preexisting.length} already failing at the baseline (not blamed)` : "";
  if (findings.length > 0) {
    const counts = [
      comparison.regressions.length ? `${comparison.regressions.length} regression(s)` : "",
      comparison.newFailures.length ? `${comparison.newFailures.length} new/planted test(s) failing` : "",
    ].filter(Boolean).join(", ");
    return { report: { ...base, exitCode, status: "fail", summary: `${counts} of ${comparison.total}${notBlamed}`, findings }, results };
  }
  return { report: { ...base, exitCode, status: "pass", summary: `${comparison.passed}/${comparison.total} passed${notBlamed}`, findings: [] }, results };
}

/** The toolchain's fault, not the work's: a command that cannot start, is missing, is killed, or times out. */
function environmentError(outcome: RunOutcome, timeoutMs: number): string | undefined {
  switch (outcome.kind) {
    case "spawn-error": return `could not start: ${outcome.message}`;
    case "timed-out": return `timed out after ${formatDuration(timeoutMs)}`;
    case "stalled":
    case "aborted":
    case "signalled": return describeOutcome(outcome);
    case "exited":
      if (outcome.code === 127) return "command not found (exit 127): is the tool installed?";
      if (outcome.code === 126) return "command not executable (exit 126)";
      return undefined;
  }
}
