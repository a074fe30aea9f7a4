import { describe, expect, it } from "vitest";
import { normalizeResults, parseJunit } from "../../src/gates/junit.js";

describe("parseJunit", () => {
  it("reads pytest's report: classname::name, failures, errors and skips", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
      <testcase classname="tests.test_loader" name="test_ok" time="0.01"/>
      <testcase classname="tests.test_loader" name="test_bad"><failure message="assert 1 == 2">trace</failure></testcase>
      <testcase classname="tests.test_loader" name="test_err"><error message="boom"/></testcase>
      <testcase classname="tests.test_loader" name="test_later"><skipped message="todo"/></testcase>
    </testsuite></testsuites>`;
    expect(parseJunit(xml)).toEqual({
      ok: true,
      results: [
        { id: "tests.test_loader::test_ok", outcome: "passed" },
        { id: "tests.test_loader::test_bad", outcome: "failed" },
        { id: "tests.test_loader::test_err", outcome: "failed" },
        { id: "tests.test_loader::test_later", outcome: "skipped", reason: "todo" },
      ],
    });
  });

  it("marks an expected failure that ran (pytest's xfail, node:test's failing todo) as skipped and expected; a todo that fails does not fail", () => {
    const xml = `<testsuites><testsuite name="pytest">
      <testcase classname="tests.test_a" name="test_known"><skipped type="pytest.xfail" message="known"/></testcase>
      <testcase classname="tests.test_a" name="test_mac"><skipped type="pytest.skip" message="macOS only">x</skipped></testcase>
      </testsuite><testcase name="later" classname="test" failure="1 == 2"><skipped type="todo" message="later"/><failure type="testCodeFailure" message="1 == 2"/></testcase>
      <testcase name="someday" classname="test"><skipped type="todo" message="someday"/></testcase></testsuites>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && parsed.results).toEqual([
      { id: "tests.test_a::test_known", outcome: "skipped", reason: "known", expectedFailure: true },
      { id: "tests.test_a::test_mac", outcome: "skipped", reason: "macOS only" },
      { id: "test::later", outcome: "skipped", reason: "later", expectedFailure: true },
      { id: "test::someday", outcome: "skipped", reason: "someday" },
    ]);
  });

  it("names jest-junit's cases by their file: its defaults put only the describe blocks and the title in both attributes", () => {
    // As jest-junit 17 writes it with JEST_JUNIT_ADD_FILE_ATTRIBUTE=true and JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true.
    const xml = `<testsuites name="jest tests"><testsuite name="undefined" tests="2">
      <testcase classname=" case" name=" case" time="0" file="tests/a.test.js"/>
      <testcase classname="parse rejects" name="parse rejects" time="0" file="tests/a.test.js"><failure>Error: no</failure></testcase>
      </testsuite><testsuite name="undefined" tests="1"><testcase classname=" case" name=" case" time="0" file="tests/b.test.js"><failure>Error: no</failure></testcase></testsuite>
      <testsuite name="tests/c.test.js" errors="1" tests="0"><testcase classname="Test suite failed to run" name="tests/c.test.js" file="tests/c.test.js"><error>  ● Test suite failed to run</error></testcase>
      <testcase classname="Test suite failed to run" name="tests/c.test.js" file="tests/c.test.js"><failure>{}</failure></testcase></testsuite></testsuites>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && parsed.results).toEqual([
      { id: "tests/a.test.js::case", outcome: "passed", file: "tests/a.test.js" },
      { id: "tests/a.test.js::parse rejects", outcome: "failed", file: "tests/a.test.js" },
      { id: "tests/b.test.js::case", outcome: "failed", file: "tests/b.test.js" },
      { id: "Test suite failed to run::tests/c.test.js", outcome: "failed", file: "tests/c.test.js" },
    ]);
  });

  it("reads node:test's report (failure attribute, test cases at the top level) and nested suites", () => {
    const xml = `<testsuites><testcase name="one" classname="test"/><testcase name="two" classname="test" failure="1 == 2"><failure type="x" message="1 == 2"/></testcase>
      <testsuite name="outer"><testsuite name="inner"><testcase name="deep"/></testsuite></testsuite></testsuites>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && parsed.results).toEqual([
      { id: "test::one", outcome: "passed" },
      { id: "test::two", outcome: "failed" },
      { id: "deep", outcome: "passed" },
    ]);
  });

  it("names mocha's cases by their file and full title (its xunit reporter puts the describe blocks in the classname, the title in the name), and a file it could not load by its path", () => {
    // As mocha 12's built-in xunit reporter wrote it in parallel mode (two files with one describe and title, and a file that could not load).
    const xml = `<testsuite name="Mocha Tests" tests="4" failures="0" errors="2" skipped="1" timestamp="Mon, 07 Dec 2026 19:15:58 GMT" time="0.299">
<testcase classname="adder" name="adds" file="/w/test/a.test.js" time="0"/>
<testcase classname="adder" name="adds" file="/w/test/b.test.js" time="0"><failure>2 !== 3</failure></testcase>
<testcase classname="" name="top level" file="/w/test/a.test.js" time="0"><skipped/></testcase>
<testcase classname="" name="Uncaught error outside test suite" file="/w/test/c.test.js" time="0"><failure>Cannot find module</failure></testcase>
</testsuite>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && normalizeResults(parsed.results, "/w")).toEqual([
      { id: "test/a.test.js::adder adds", outcome: "passed", file: "test/a.test.js" },
      { id: "test/b.test.js::adder adds", outcome: "failed", file: "test/b.test.js" },
      { id: "test/a.test.js::top level", outcome: "skipped", file: "test/a.test.js" },
      { id: "test/c.test.js", outcome: "failed", file: "test/c.test.js" },
    ]);
    // Another runner's suite keeps classname::name.
    const other = parseJunit('<testsuite name="other"><testcase classname="adder" name="adds" file="a.js"/></testsuite>');
    expect(other.ok && other.results[0]?.id).toBe("adder::adds");
  });

  it("reports malformed XML as data", () => {
    expect(parseJunit("<testsuite><testcase")).toMatchObject({ ok: false, reason: "junit-unparseable" });
  });
});

describe("normalizeResults", () => {
  it("makes absolute file paths in ids repository-relative, so a baseline fits every worktree", () => {
    const xml = `<testsuites><testcase name="/tmp/wt/P01/test/x.test.js" classname="test" failure="test failed"><failure/></testcase>
      <testcase name="t" classname="c" file="/tmp/wt/P01/test/y.test.js"/></testsuites>`;
    const parsed = parseJunit(xml);
    expect(parsed.ok && normalizeResults(parsed.results, "/tmp/wt/P01")).toEqual([
      { id: "test::test/x.test.js", outcome: "failed" },
      { id: "c::t", outcome: "passed", file: "test/y.test.js" },
    ]);
  });

  it("marks pytest's collection failures as not being tests", () => {
    const xml = `<testsuites><testsuite><testcase classname="" name="tests.test_b"><error message="collection failure">ImportError</error></testcase></testsuite></testsuites>`;
    expect(parseJunit(xml)).toEqual({ ok: true, results: [{ id: "tests.test_b", outcome: "failed", collectionError: true }] });
  });
});
