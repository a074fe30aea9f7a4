import { describe, expect, it } from "vitest";
import { reportDisagreement, runnerSummaries } from "../../src/gates/runner-summary.js";

describe("the runner's own summary line", () => {
  it("is read from pytest (-q and full), vitest, jest, node:test (TAP and spec) and mocha output, colours removed", () => {
    const failed = (output: string) => runnerSummaries(output).map((summary) => summary.failed);
    expect(failed("F.   [100%]\n1 failed, 1 passed in 1.11s\n")).toEqual([1]);
    expect(failed("==== 2 failed, 3 passed, 1 error, 1 xfailed in 0.52s ====")).toEqual([3]);
    expect(failed("=========== 4 passed, 1 warning in 0.12s ===========")).toEqual([0]);
    expect(failed(" Test Files  1 failed | 1 passed (2)\n      Tests  2 failed | 5 passed (7)\n")).toEqual([2]);
    expect(
      failed("\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[31m1 failed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m\u001b[1m\u001b[32m3 passed\u001b[39m\u001b[22m\u001b[90m (4)\u001b[39m"),
    ).toEqual([1]);
    expect(failed("Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 passed, 3 total\n")).toEqual([1]);
    expect(failed("# tests 3\n# pass 2\n# fail 1\n")).toEqual([1]);
    expect(failed("ℹ tests 3\nℹ pass 3\nℹ fail 0\n")).toEqual([0]);
    expect(failed("  3 passing (12ms)\n  1 failing\n")).toEqual([1]);
    expect(failed("nothing a runner printed\n")).toEqual([]);
  });

  it("makes a report with fewer failures than the runner printed a disagreement, quoting both; an agreeing one is believed", () => {
    const printed = runnerSummaries("1 failed, 1 passed in 1.11s");
    expect(reportDisagreement(printed, 0, 2)).toBe(
      'its report and its own summary disagree: the report shows 0 failing of 2, the runner printed "1 failed, 1 passed in 1.11s" (a report rewritten after the run?); not believed',
    );
    expect(reportDisagreement(printed, 1, 2)).toBeUndefined();
    expect(reportDisagreement([], 0, 2)).toBeUndefined();
  });
});
