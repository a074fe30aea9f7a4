import { describe, expect, it } from "vitest";
import { parseJunit } from "../../src/gates/junit.js";

describe("parseJunit", () => {
  it("reads passed, failed and skipped test cases at any depth", () => {
    const xml = `<testsuites><testsuite name="a"><testsuite name="b">
      <testcase classname="m" name="ok"/>
      <testcase classname="m" name="bad"><failure message="x"/></testcase>
      <testcase classname="m" name="later"><skipped/></testcase>
    </testsuite></testsuite></testsuites>`;
    expect(parseJunit(xml)).toEqual({ ok: true, results: [
      { id: "m::ok", outcome: "passed" }, { id: "m::bad", outcome: "failed" }, { id: "m::later", outcome: "skipped" },
    ] });
  });

  it("reports malformed XML as data", () => {
    expect(parseJunit("<testsuite><testcase")).toMatchObject({ ok: false, reason: "junit-unparseable" });
  });
});
