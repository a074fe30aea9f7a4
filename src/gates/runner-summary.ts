/**
 * The runner's own last word on a run, read from what it printed: pytest's
 * "1 failed, 2 passed in 0.12s", vitest's "Tests  1 failed | 2 passed (3)",
 * jest's "Tests: 1 failed, 2 passed, 3 total", node:test's "# fail 1" or
 * "ℹ fail 1", mocha's "1 failing". A JUnit report is a file the code under
 * test can rewrite; a report that shows fewer failures than the runner
 * printed is not believed.
 */
export interface RunnerSummary {
  /** Failed and errored tests, as the runner counted them. */
  failed: number;
  /** The line it came from, quoted in a finding. */
  line: string;
}

const PYTEST = /^(?:=+ )?((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+) in [\d.]+s\b/;
const VITEST = /^\s*Tests\s+(.*\(\d+\))\s*$/;
const JEST = /^Tests:\s+(.*\d+ total)\s*$/;
const NODE_TEST = /^(?:#|ℹ) fail (\d+)\s*$/;
const MOCHA = /^\s*(\d+) failing\s*$/;

/** Pure: every summary line of the runners above in `output` (ANSI colours removed), in order. */
export function runnerSummaries(output: string): RunnerSummary[] {
  const found: RunnerSummary[] = [];
  const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
  for (const raw of plain.split("\n")) {
    const line = raw.trimEnd();
    const pytest = PYTEST.exec(line);
    if (pytest?.[1]) {
      found.push({ failed: count(pytest[1], /(\d+) failed\b/) + count(pytest[1], /(\d+) errors?\b/), line: line.trim() });
      continue;
    }
    const table = VITEST.exec(line) ?? JEST.exec(line);
    if (table?.[1]) {
      found.push({ failed: count(table[1], /(\d+) failed\b/), line: line.trim() });
      continue;
    }
    const single = NODE_TEST.exec(line) ?? MOCHA.exec(line);
    if (single?.[1]) found.push({ failed: Number(single[1]), line: line.trim() });
  }
  return found;
}

function count(text: string, pattern: RegExp): number {
  const match = pattern.exec(text);
  return match?.[1] ? Number(match[1]) : 0;
}

/**
 * Pure: why a report is not believed, or undefined: the runner printed a
 * summary with more failures than the report holds.
 */
export function reportDisagreement(summaries: readonly RunnerSummary[], reportFailed: number, reportTotal: number): string | undefined {
  const worse = summaries.find((summary) => summary.failed > reportFailed);
  if (!worse) return undefined;
  return `its report and its own summary disagree: the report shows ${reportFailed} failing of ${reportTotal}, the runner printed "${worse.line}" (a report rewritten after the run?); not believed`;
}
