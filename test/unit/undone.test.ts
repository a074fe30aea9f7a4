import { describe, expect, it } from "vitest";
import { findUndone, type LoggedCommit } from "../../src/git/undone.js";

const commit = (id: string, changes: Record<string, [string, string]>, packets: string[] = []): LoggedCommit => ({
  commit: id,
  subject: `subject ${id}`,
  packets,
  changes: new Map(Object.entries(changes).map(([path, [before, after]]) => [path, { before, after }])),
});

describe("a landing the target no longer carries", () => {
  const landing = commit("L", { "src/a.js": ["", "a1"], "src/b.js": ["b0", "b1"] }, ["P01"]);
  const merged = new Set(["P01"]);

  it("is one whose every changed file a later commit put back as before, and nothing changed since", () => {
    const undo = commit("U", { "src/a.js": ["a1", ""], "src/b.js": ["b1", "b0"], "notes.txt": ["", "n"] });
    expect(findUndone([commit("X", { "other.txt": ["", "x"] }), undo, landing], merged)).toEqual([
      { packet: "P01", commit: "L", paths: ["src/a.js", "src/b.js"], by: { commit: "U", subject: "subject U" } },
    ]);
  });

  it("is not one with a file left as it landed, one changed further since, a packet the ledger does not call merged, or one a later packet undid", () => {
    expect(findUndone([commit("U", { "src/a.js": ["a1", ""] }), landing], merged)).toEqual([]);
    expect(findUndone([commit("V", { "src/a.js": ["", "a2"] }), commit("U", { "src/a.js": ["a1", ""], "src/b.js": ["b1", "b0"] }), landing], merged)).toEqual([]);
    expect(findUndone([commit("U", { "src/a.js": ["a1", ""], "src/b.js": ["b1", "b0"] }), landing], new Set(["P02"]))).toEqual([]);
    // Nor one a later packet undid through the gates (its own landing names it).
    expect(findUndone([commit("P", { "src/a.js": ["a1", ""], "src/b.js": ["b1", "b0"] }, ["P05"]), landing], new Set(["P01", "P05"]))).toEqual([]);
  });
});
