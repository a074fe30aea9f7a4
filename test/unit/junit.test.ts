import { describe, expect, it } from "vitest";
import { compareWithBaseline, newPassing, parseJunit } from "../../src/gates/junit.js";

describe("parseJunit", () => {
  it("reads pytest's report: classname::name, failures, errors and skips", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
      <testcase classname="tests.test_loader" name="test_ok" time="0.01"/>
      <testcase classname="tests.test_loader" name="test_bad"><failure message="assert 1 == 2">trace</failure></testcase>
      <testcase classname="tests.test_loader" name="test_err"><error message="boom"/></testcase>
      <testcase classname="tests.test_loader" name="test_later"><skipped message="todo"/></testcase>
    </testsuite></testsuites>`;
    expect(parseJunit(xml)).toEqual({ ok: true, results: [
      { id: "tests.test_loader::test_ok", outcome: "passed" },
      { id: "tests.test_loader::test_bad", outcome: "failed" },
      { id: "tests.test_loader::test_err", outcome: "failed" },
      { id: "tests.test_loader::test_later", outcome: "skipped" },
    ] });
  });

  it("reads node:test's report (failure attribute, test cases at the top level) and nested suites", () => {
    const xml = `<testsuites><testcase name="one" classname="test"/><testcase name="two" classname="test" failure="1 == 2"><failure type="x" message="1 == 2"/></testcase>
      <testsuite name="outer"><testsuite name="inner"><testcase name="deep"/></testsuite></testsuite></testsuites>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && parsed.results).toEqual([
      { id: "test::one", outcome: "passed" }, { id: "test::two", outcome: "failed" }, { id: "deep", outcome: "passed" },
    ]);
  });

  it("reports malformed XML as data", () => {
    expect(parseJunit("<testsuite><testcase")).toMatchObject({ ok: false, reason: "junit-unparseable" });
  });
});

describe("compareWithBaseline", () => {
  const baseline = [
    { id: "a", outcome: "passed" as const }, { id: "b", outcome: "failed" as const }, { id: "c", outcome: "passed" as const },
  ];

  it("blames regressions and new failures, not tests that already failed", () => {
    const now = [
      { id: "a", outcome: "failed" as const }, { id: "b", outcome: "failed" as const }, { id: "c", outcome: "passed" as const },
      { id: "planted", outcome: "failed" as const }, { id: "new-ok", outcome: "passed" as const },
    ];
    expect(compareWithBaseline(baseline, now)).toEqual({ total: 5, passed: 2, regressions: ["a"], newFailures: ["planted"], preexisting: ["b"] });
  });

  it("counts a test reported several times as failed if any report failed", () => {
    const now = [{ id: "a", outcome: "passed" as const }, { id: "a", outcome: "failed" as const }];
    expect(compareWithBaseline(baseline, now).regressions).toEqual(["a"]);
  });

  it("finds planted tests that pass before any implementation", () => {
    expect(newPassing(baseline, [...baseline, { id: "p1", outcome: "passed" }, { id: "p2", outcome: "failed" }])).toEqual(["p1"]);
  });
});
