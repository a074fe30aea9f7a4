import { describe, expect, it } from "vitest";
import { trippedBy } from "../../src/loop/tripwire.js";

describe("trippedBy", () => {
  const before = new Map([["config", "100644 a"], ["hooks/pre-commit.sample", "100755 b"]]);

  it("stays quiet when nothing changed", () => {
    expect(trippedBy(before, new Map(before))).toEqual([]);
  });

  it("names what changed, appeared and disappeared", () => {
    const after = new Map([["config", "100644 z"], ["hooks/post-merge", "100755 c"]]);
    expect(trippedBy(before, after)).toEqual([".git/config changed", ".git/hooks/post-merge appeared", ".git/hooks/pre-commit.sample disappeared"]);
  });
});
