import { describe, expect, it } from "vitest";
import type { TestResult } from "../../src/gates/junit.js";
import { hiddenCases, judgeHoldout } from "../../src/guards/holdout.js";

const pass = (id: string): TestResult => ({ id, outcome: "passed" });
const fail = (id: string): TestResult => ({ id, outcome: "failed" });

describe("hiddenCases", () => {
  const files = ["tests/test_hidden.py"];

  it("takes the cases named by the hidden files, and a file that does not load as one failing case", () => {
    const results = [pass("tests.test_hidden::test_a"), fail("tests.test_other::test_b"), { id: "tests.test_hidden", outcome: "failed", collectionError: true } as TestResult];
    expect(hiddenCases(results, files, ".", false).map((result) => result.id)).toEqual(["tests.test_hidden::test_a", "tests.test_hidden"]);
  });

  it("run alone (the gate named {tests}), takes every case, since node:test names no file; never a passing entry named by the file", () => {
    const nodeFiles = ["test/hidden.test.js"];
    const results = [pass("test::keeps order"), fail("test::rejects empty"), pass("test::test/hidden.test.js")];
    expect(hiddenCases(results, nodeFiles, ".", true).map((result) => result.id)).toEqual(["test::keeps order", "test::rejects empty"]);
    expect(hiddenCases(results, nodeFiles, ".", false)).toEqual([]);
    expect(hiddenCases([fail("test::test/hidden.test.js")], nodeFiles, ".", true).map((result) => result.id)).toEqual(["test::test/hidden.test.js"]);
  });
});

describe("judgeHoldout", () => {
  it("passes when every hidden case passes; fails a failing or skipped case, and no case at all", () => {
    expect(judgeHoldout([pass("a"), pass("b")], 1, ["I1"])).toMatchObject({ status: "pass", ran: 2, failed: 0 });
    expect(judgeHoldout([pass("a"), { id: "b", outcome: "skipped" }], 1, ["I1"])).toMatchObject({ status: "fail", failed: 1 });
    expect(judgeHoldout([], 2, ["I1"]).summary).toContain("yielded no test case");
  });
});
