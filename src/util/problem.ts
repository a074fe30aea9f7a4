/**
 * A problem with something the user wrote: a packet, the config, a command line.
 * Problems are data: every reader collects all of them and reports them at once.
 */
export interface Problem {
  /** The file, relative to the repository root where there is one. */
  file: string;
  /** 1-based line, when it is known. */
  line?: number;
  /** Dotted key path inside the file, e.g. `invariants[1].id`. */
  key?: string;
  message: string;
}

export function formatProblem(problem: Problem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  const key = problem.key === undefined ? "" : ` ${problem.key}:`;
  return `${where}:${key} ${problem.message}`;
}

export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
}
