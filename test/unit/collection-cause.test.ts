import { describe, expect, it } from "vitest";
import { collectionCause } from "../../src/loop/baseline.js";

describe("why a suite ran no test", () => {
  it("names the first error the runner printed, and for an import that fails, how to let the tests import the project", () => {
    const tail =
      "____ ERROR collecting tests/test_calc.py ____\ntests/test_calc.py:1: in <module>\n    from calc import add\nE   ModuleNotFoundError: No module named 'calc'\n!!!! Interrupted: 1 error during collection !!!!";
    expect(collectionCause(tail)).toMatch(/^: ModuleNotFoundError: No module named 'calc': the tests cannot import the project as the gate runs them; .*PYTHONPATH=src/);
    expect(collectionCause("E   SyntaxError: invalid syntax")).toBe(": SyntaxError: invalid syntax");
    expect(collectionCause("no tests ran in 0.01s")).toBe("");
  });
});
