import { describe, expect, it } from "vitest";
import { mutantsFlag, newlyLanded } from "../../src/loop/mutation-verdict.js";
import { jsMutants, maskNonCode, sampleEvenly } from "../../src/planning/mutate-js.js";

const SOURCE = [
  'import { x } from "./x.js";', // 1: never mutated (an import)
  "export function f(a, b) {",
  '  const label = "a < b && 1 + 2"; // 3 > 2',
  "  if (a < b && b !== 0) {",
  "    total += a * 2;",
  "    return true;",
  "  }",
  "  return a - 1;",
  "}",
].join("\n");

describe("mutants of JavaScript and TypeScript lines", () => {
  it("flips spaced operators, changes numbers and booleans, drops statements; only on the given lines", () => {
    const made = jsMutants("src/f.js", SOURCE, new Set([1, 3, 4, 5, 6, 8]));
    expect(made.map((mutant) => `${mutant.line} ${mutant.description}`)).toEqual([
      '4 "<" -> ">="',
      '4 "&&" -> "||"',
      '4 "!==" -> "==="',
      "4 0 -> 1",
      '5 "*" -> "/"',
      "5 2 -> 3",
      "5 statement dropped",
      "6 true -> false",
      "6 statement dropped",
      '8 "-" -> "+"',
      "8 1 -> 2",
      "8 statement dropped",
    ]);
    expect(made[0]?.source.split("\n")[3]).toBe("  if (a >= b && b !== 0) {");
    expect(made[6]?.source.split("\n")[4]).toBe("    ;");
    // Nothing inside the string or the comment of line 3, and the rest of the file untouched.
    expect(made.every((mutant) => mutant.source.split("\n")[2] === SOURCE.split("\n")[2])).toBe(true);
  });

  it("masks strings, template literals and comments, keeping lengths and line breaks", () => {
    const text = "a = \"x < y\"; b = `1 +\n 2`; /* 3 *\n 4 */ c = 5; // 6\nd = 'q\\'r';";
    const masked = maskNonCode(text);
    expect(masked.length).toBe(text.length);
    expect(masked.split("\n")).toHaveLength(text.split("\n").length);
    expect(masked).toBe("a = \"     \"; b = `   \n  `;       \n      c = 5;     \nd = '    ';");
  });

  it("samples evenly within the budget", () => {
    expect(sampleEvenly([1, 2, 3, 4, 5, 6, 7, 8], 4)).toEqual([1, 3, 5, 7]);
    expect(sampleEvenly([1, 2], 5)).toEqual([1, 2]);
    expect(sampleEvenly([1, 2], 0)).toEqual([]);
  });
});

describe("the mutation check's decisions", () => {
  it("runs for packets landed now, a new version landed again included", () => {
    const before = new Map([
      ["A", "c1"],
      ["B", "c2"],
    ]);
    expect(
      newlyLanded(
        before,
        new Map([
          ["A", "c1"],
          ["B", "c3"],
          ["C", "c4"],
        ]),
      ),
    ).toEqual([
      { id: "B", commit: "c3" },
      { id: "C", commit: "c4" },
    ]);
  });

  it("flags tests that killed no mutant, never a packet with nothing measured", () => {
    expect(mutantsFlag({ made: 4, killed: 0 })).toBe("its tests cannot tell this code from a broken one");
    expect(mutantsFlag({ made: 4, killed: 1 })).toBeUndefined();
    expect(mutantsFlag({ made: 0, killed: 0 })).toBeUndefined();
  });
});
