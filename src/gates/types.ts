/** pass: fine. fail: the work's fault (spends an attempt). error: the environment's (does not). skipped: nothing to check. */
export type GateStatus = "pass" | "fail" | "error" | "skipped";

export interface Finding {
  file: string;
  line?: number;
  message: string;
}

export interface GateReport {
  name: string;
  status: GateStatus;
  /** One line: what happened. */
  summary: string;
  findings: Finding[];
  command?: string;
  exitCode?: number;
  durationMs: number;
  /** The tail of the output; the full output is in the run directory. */
  tail?: string;
  /** An error because the command timed out or was killed: whose fault it is depends on whether it finishes without the change. */
  hung?: true;
  /** Passing or not, a person must rule on what this gate saw before anything lands (the packet is held for `factory approve`). */
  forPerson?: string;
}

export function isGreen(reports: readonly GateReport[]): boolean {
  return reports.every((report) => report.status === "pass" || report.status === "skipped");
}

export function builtinReport(name: string, findings: Finding[], okSummary: string, durationMs = 0): GateReport {
  if (findings.length === 0) return { name, status: "pass", summary: okSummary, findings, durationMs };
  const first = findings[0];
  const where = first ? `${first.file}${first.line ? `:${first.line}` : ""}: ${first.message}` : "";
  const more = findings.length > 1 ? ` (and ${findings.length - 1} more)` : "";
  return { name, status: "fail", summary: `${where}${more}`, findings, durationMs };
}
