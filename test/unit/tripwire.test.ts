import { describe, expect, it } from "vitest";
import { trippedBy } from "../../src/guards/tripwire.js";

describe("trippedBy", () => {
  const before = new Map([
    [".git/config", "100644 a"],
    [".git/hooks/pre-commit.sample", "100755 b"],
    ["ref refs/tags/v1", "abc"],
  ]);

  it("stays quiet when nothing changed", () => {
    expect(trippedBy(before, new Map(before))).toEqual([]);
  });

  it("names what changed, appeared and disappeared", () => {
    const after = new Map([
      [".git/config", "100644 z"],
      [".git/hooks/post-merge", "100755 c"],
      ["ref refs/tags/v1", "abc"],
      ["~/.local/bin/python3", "100755 10 1"],
    ]);
    expect(trippedBy(before, after)).toEqual([".git/config changed", ".git/hooks/post-merge appeared", ".git/hooks/pre-commit.sample disappeared", "~/.local/bin/python3 appeared"]);
  });
});
