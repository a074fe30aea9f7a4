import { describe, expect, it } from "vitest";
import { describeFlaky, flakyAsAtBaseline, judgeReruns, plantedFlips, steadyAgain } from "../../src/gates/flaky.js";

describe("flaky tests told from regressions", () => {
  it("a test that flips on the untouched tip is flaky; one steady at the tip that fails here stays a regression", () => {
    const verdict = judgeReruns([
      { id: "t::flaky", candidate: ["failed", "passed", "passed"], tip: ["passed", "failed", "passed"] },
      { id: "t::broken", candidate: ["failed", "failed", "failed"], tip: ["passed", "passed", "passed"] },
      { id: "t::racy", candidate: ["failed", "passed", "failed"], tip: ["passed", "passed", "passed"] },
    ]);
    expect(verdict.flaky.map((test) => test.id)).toEqual(["t::flaky"]);
    expect(verdict.regressions.map((test) => test.id)).toEqual(["t::broken", "t::racy"]);
    expect(verdict.regressions[0]?.message).toContain("failed 3 of 3 run(s) here, passed all 3 runs at the tip");
    expect(verdict.regressions[1]?.message).toContain("fails 2 of 3 runs here");
    expect(describeFlaky(verdict.flaky[0] as never)).toBe("flaky at the tip: t::flaky, 1 of 3 runs failed");
  });

  it("planted cases whose runs disagree flip; steered ones (pass in the suite, fail alone every time) and steady ones do not", () => {
    const suite = new Map([
      ["a", "passed"],
      ["b", "passed"],
      ["c", "passed"],
    ] as const);
    const alone = [
      new Map([
        ["a", "passed"],
        ["b", "failed"],
        ["c", "passed"],
      ] as const),
      new Map([
        ["a", "failed"],
        ["b", "failed"],
        ["c", "passed"],
      ] as const),
    ];
    expect(plantedFlips(["a", "b", "c"], suite, alone)).toEqual([{ id: "a", passed: 2, runs: 3 }]);
  });

  it("a known flaky test is steady again only after three runs at the tip agree; results keep the baseline's outcome for flaky tests", () => {
    const known = new Set(["t::x"]);
    expect(steadyAgain([{ id: "t::x", candidate: ["failed"], tip: ["passed", "passed", "passed"] }], known)).toEqual([{ id: "t::x", tip: ["passed", "passed", "passed"] }]);
    expect(steadyAgain([{ id: "t::x", candidate: ["failed"], tip: ["passed"] }], known)).toEqual([]);
    expect(
      flakyAsAtBaseline(
        [
          { id: "t::x", outcome: "failed" },
          { id: "t::y", outcome: "failed" },
        ],
        [
          { id: "t::x", outcome: "passed" },
          { id: "t::y", outcome: "passed" },
        ],
        [{ id: "t::x" }],
      ),
    ).toEqual([
      { id: "t::x", outcome: "passed" },
      { id: "t::y", outcome: "failed" },
    ]);
  });
});
