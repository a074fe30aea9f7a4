import { describe, expect, it } from "vitest";
import { issueOfSpec, landedComment, parseIssueRef, slugOf } from "../../src/forge/intake.js";

describe("issue intake", () => {
  it("reads an issue named by number or by its URL on the configured repository only", () => {
    expect(parseIssueRef("#12", "acme/w")).toEqual({ ok: true, number: 12 });
    expect(parseIssueRef("https://github.com/acme/w/issues/12#issuecomment-1", "acme/w")).toEqual({ ok: true, number: 12 });
    expect(parseIssueRef("https://github.com/else/w/issues/12", "acme/w")).toMatchObject({ ok: false, problem: expect.stringContaining("not of acme/w") });
    expect(parseIssueRef("twelve", "acme/w")).toMatchObject({ ok: false });
    expect(slugOf("Triple numbers, please!")).toBe("triple-numbers-please");
    expect(issueOfSpec("docs/intake/12-triple.md")).toBe(12);
    expect(issueOfSpec("docs/SPEC.md")).toBeUndefined();
  });

  it("makes the reviewer's evidence inert in the landing comment: no mention, no markup, no column break", () => {
    const comment = landedComment({
      packet: "P02",
      goal: "Add <b>triple</b>",
      commit: "c0ffee",
      branch: "main",
      costUsd: 0.25,
      rulings: [{ id: "triples", status: "held", evidence: "src/triple.js:2 | ping @alice <img src=x>" }],
      gates: [{ name: "test", status: "pass" }],
    });
    expect(comment).toContain("| triples | held | src/triple.js:2 \\| ping @\u2060alice &lt;img src=x&gt; |");
    expect(comment).toContain("(Add &lt;b&gt;triple&lt;/b&gt;)");
    expect(comment).not.toMatch(/@alice|<img|<b>/);
  });
});
