import { describe, expect, it } from "vitest";
import { weakenedAsserts } from "../../src/guards/assert-facts.js";
import { jsAssertFacts } from "../../src/guards/js-asserts.js";

const BEFORE = `import { test, expect } from "vitest";
describe("add", () => {
  test("adds", () => {
    expect(add(2, 2)).toBe(4);
    assert.equal(add(0, 0), 0);
  });
});
`;

/** What the parsed rules find when a file goes from `before` to `after`. */
function weakened(after: string, before = BEFORE, path = "test/add.test.ts"): string[] {
  return weakenedAsserts(jsAssertFacts(path, before), jsAssertFacts(path, after)).map((finding) => finding.message);
}

describe("assertions read by TypeScript's parser", () => {
  it("fire on an assertion made conditional, after an early return, in a callback, swallowed by a catch, or made constant", () => {
    const body = (inside: string) => `describe("add", () => {\n  test("adds", () => {\n${inside}\n  });\n});\n`;
    expect(weakened(body("    if (process.env.CI) expect(add(2, 2)).toBe(4);\n    assert.equal(add(0, 0), 0);"))).toEqual([
      '"add > adds" has fewer assertions that always run (2 before, 1 now): made conditional (under an if, a loop or a try)',
    ]);
    expect(weakened(body("    if (add(2, 2) === 5) return;\n    expect(add(2, 2)).toBe(4);\n    assert.equal(add(0, 0), 0);"))).toHaveLength(1);
    expect(weakened(body("    [].forEach(() => expect(add(2, 2)).toBe(4));\n    assert.equal(add(0, 0), 0);"))).toHaveLength(1);
    expect(weakened(body("    try {\n      expect(add(2, 2)).toBe(4);\n    } catch {}\n    assert.equal(add(0, 0), 0);"))).toEqual(['catches and ignores the failure of an assertion of "add > adds"']);
    expect(weakened(body("    expect(4).toBe(4);\n    expect(add(2, 2)).toBe(4);\n    assert.equal(add(0, 0), 0);"))).toEqual([
      'makes an assertion of "add > adds" a tuple or a constant, which is always true',
    ]);
  });

  it("stay quiet on honest change: reformatting, more assertions, a rethrowing catch, a renamed variable, a file that does not parse", () => {
    expect(weakened(BEFORE.replace("expect(add(2, 2)).toBe(4);", "expect(\n      add(2, 2),\n    ).toBe(4);"))).toEqual([]);
    expect(weakened(BEFORE.replace("assert.equal(add(0, 0), 0);", "assert.equal(add(0, 0), 0);\n    for (const n of [1, 2]) expect(add(n, 0)).toBe(n);"))).toEqual([]);
    expect(weakened(BEFORE.replace("expect(add(2, 2)).toBe(4);", "try {\n      expect(add(2, 2)).toBe(4);\n    } catch (error) {\n      log(error);\n      throw error;\n    }"))).toEqual([]);
    expect(weakened("test('adds', () => { expect(add(2, 2)).toBe(4) ", BEFORE)).toEqual([]);
    expect(weakened(BEFORE, BEFORE, "test/add.test.js")).toEqual([]);
  });
});
