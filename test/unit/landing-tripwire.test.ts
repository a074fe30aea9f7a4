import { describe, expect, it } from "vitest";
import type { TestResult } from "../../src/gates/junit.js";
import { describeRedOnLanding, redOnLanding } from "../../src/gates/landing-tripwire.js";

const r = (id: string, outcome: TestResult["outcome"]): TestResult => ({ id, outcome });
const gates = (results: TestResult[]) => new Map([["pytest", results]]);

describe("redOnLanding", () => {
  it("names a test that fails on the tree to land and passed, was skipped or was absent on the tip", () => {
    const tip = gates([r("t::a", "passed"), r("t::b", "skipped"), r("t::c", "failed")]);
    const landing = gates([r("t::a", "failed"), r("t::b", "failed"), r("t::c", "failed"), r("t::d", "failed"), r("t::e", "passed")]);
    expect(redOnLanding(tip, landing)).toEqual([
      { gate: "pytest", id: "t::a", was: "passed" },
      { gate: "pytest", id: "t::b", was: "skipped" },
      { gate: "pytest", id: "t::d", was: "absent" },
    ]);
  });

  it("is quiet when every failing test failed on the tip too, and when nothing fails", () => {
    expect(redOnLanding(gates([r("t::c", "failed"), r("t::a", "passed")]), gates([r("t::c", "failed"), r("t::a", "passed"), r("t::new", "passed")]))).toEqual([]);
  });

  it("judges each gate by its own baseline, and a parametrized id failing once as failed", () => {
    const tip = new Map([
      ["unit", [r("x", "failed")]],
      ["e2e", [r("x", "passed")]],
    ]);
    const landing = new Map([
      ["unit", [r("x", "failed")]],
      ["e2e", [r("x", "passed"), r("x", "failed")]],
    ]);
    expect(redOnLanding(tip, landing)).toEqual([{ gate: "e2e", id: "x", was: "passed" }]);
  });

  it("says what failed, that nothing landed, and the commands", () => {
    const text = describeRedOnLanding([{ gate: "pytest", id: "t::a", was: "passed" }], "0123456789abcdef", "P07");
    expect(text).toMatch(/^ALARM: the factory's own verdict passed a tree whose tests fail: t::a \(passed on the tip\) fail on the tree that was to land on 0123456789; nothing landed/);
    expect(text).toContain("`factory show P07`");
    expect(text).toContain("`factory unblock P07`");
  });
});
