import { describe, expect, it } from "vitest";
import { newFindings } from "../../src/gates/lint-compare.js";

describe("the findings a change brought", () => {
  const files = ["src/a.py"];
  it("ignores findings that only moved, and summary lines that name no checked file", () => {
    const before = "src/a.py:3:1: F401 `os` imported but unused\nFound 1 error.\n";
    const now = "\u001b[1msrc/a.py\u001b[0m:9:1: F401 `os` imported but unused\nFound 1 error.\n";
    expect(newFindings({ now, before, files })).toEqual([]);
  });

  it("counts a second occurrence of the same finding as new", () => {
    const before = "src/a.py:3:1: E501 line too long\n";
    const now = "src/a.py:3:1: E501 line too long\nsrc/a.py:12:1: E501 line too long\n";
    expect(newFindings({ now, before, files })).toEqual(["src/a.py:12:1: E501 line too long"]);
  });

  it("names a finding of another kind in the same file", () => {
    expect(newFindings({ now: "src/a.py:3:1: F401 x\nsrc/a.py:4:1: F841 y\n", before: "src/a.py:3:1: F401 x\n", files })).toEqual(["src/a.py:4:1: F841 y"]);
  });
});
