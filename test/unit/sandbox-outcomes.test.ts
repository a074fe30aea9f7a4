import { describe, expect, it } from "vitest";
import type { TestResult } from "../../src/gates/junit.js";
import { sandboxOnlyFailures } from "../../src/loop/baseline.js";

const run = (results: Record<string, TestResult["outcome"]>) => ({ results: Object.entries(results).map(([id, outcome]) => ({ id, outcome })), exitCode: 0, tail: undefined });

describe("a tip's suite inside and outside the sandbox", () => {
  it("differs by the cases that pass outside and fail inside; a case failing both ways, or only outside, is not the sandbox's", () => {
    const inside = new Map([["test", run({ a: "passed", b: "failed", c: "failed", d: "passed" })]]);
    const outside = new Map([["test", run({ a: "passed", b: "passed", c: "failed", d: "failed" })]]);
    expect(sandboxOnlyFailures(inside, outside)).toEqual(["b"]);
    const two = new Map([...inside, ["lint", run({ e: "failed" })]]);
    expect(sandboxOnlyFailures(two, new Map([...outside, ["lint", run({ e: "passed" })]]))).toEqual(["test: b", "lint: e"]);
  });
});
