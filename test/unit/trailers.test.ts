import { describe, expect, it } from "vitest";
import { type Landed, landedIndex, landedVersion } from "../../src/git/trailers.js";

describe("landed packet versions", () => {
  it("indexes a history for many lookups with the same answers as one search each: the newest landing of that exact version", () => {
    // Newest first, as git's log gives them: A01 landed twice in one version, once in another.
    const landed: Landed[] = [
      { id: "A01", sha256: "v2", commit: "c4" },
      { id: "A02", sha256: "v1", commit: "c3" },
      { id: "A01", sha256: "v1", commit: "c2" },
      { id: "A01", sha256: "v1", commit: "c1" },
    ];
    const landedAs = landedIndex(landed);
    for (const [id, sha] of [
      ["A01", "v1"],
      ["A01", "v2"],
      ["A02", "v1"],
      ["A02", "v2"],
      ["A03", "v1"],
    ] as const) {
      expect(landedAs(id, sha)).toEqual(landedVersion(landed, id, sha));
    }
    expect(landedAs("A01", "v1")?.commit).toBe("c2");
    expect(landedAs("A03", "v1")).toBeUndefined();
  });
});
