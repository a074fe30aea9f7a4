import { describe, expect, it } from "vitest";
import { fromCandidate, toCandidate } from "../../src/merge/fleet-landing.js";
import type { LandInput } from "../../src/merge/land.js";

describe("a candidate in the fleet's landing queue", () => {
  const input: LandInput = {
    packet: { id: "P01" } as LandInput["packet"],
    attempt: 2,
    commit: "c".repeat(40),
    fork: "f".repeat(40),
    planted: ["tests/test_p01.py"],
    plantedCases: { tests: { cases: ["tests/test_p01.py::test_it"], files: ["tests/test_p01.py"] } },
    plantedCommit: "p".repeat(40),
    provenance: { attempt: 2, gates: [{ name: "tests", status: "pass", summary: "3/3 passed", findings: [], durationMs: 2100 }], counts: { held: 1, violated: 0, unverifiable: 0 } },
    runDir: "/owner/.factory/runs/P01/2",
    tests: new Map([["tests/test_p01.py::test_it", [{ id: "tests/test_p01.py::test_it", status: "pass" } as never]]]),
    worktree: "/owner/worktrees/P01",
    claim: { fence: 7, assertCurrent: async () => undefined },
  };

  it("is data: what the lander needs survives JSON, the test results as entries; the owner's checkout, logs and claim do not travel", () => {
    const row = JSON.parse(JSON.stringify(toCandidate(input)));
    expect(row).not.toHaveProperty("worktree");
    expect(row).not.toHaveProperty("claim");
    expect(row.tests).toEqual([...(input.tests ?? [])]);
    const landed = fromCandidate(row, { worktree: "/lander/worktrees/_landing-P01-2", runDir: "/lander/.factory/runs/P01/2" });
    const { tests, worktree, runDir, claim: _claim, ...rest } = input;
    expect(landed).toEqual({ ...rest, tests, worktree: "/lander/worktrees/_landing-P01-2", runDir: "/lander/.factory/runs/P01/2" });
    expect(landed.tests).toBeInstanceOf(Map);
    expect([worktree, runDir]).not.toContain(landed.worktree);
  });
});
