import { describe, expect, it } from "vitest";
import { doctestExamples, rewrittenDoctests } from "../../src/guards/python-doctests.js";

describe("a module's doctests, compared", () => {
  const before =
    'def add(a, b):\n    """Sum.\n\n    >>> add(2, 2)\n    4\n    >>> add(1, 1)\n    2\n    """\n    return a + b\n\n\nclass Box:\n    def size(self):\n        """\n        >>> Box().size()\n        0\n        """\n        return 0\n';
  const [tip] = doctestExamples([before]);

  it("are read by Python's own parsers, per docstring", () => {
    expect(tip).toEqual({
      add: [
        ["add(2, 2)\n", "4\n", 4],
        ["add(1, 1)\n", "2\n", 6],
      ],
      "Box.size": [["Box().size()\n", "0\n", 15]],
    });
  });

  it("name an expected output rewritten and an example removed, not an example added or the code beside them changed", () => {
    const after = before.replace("    4\n", "    5\n").replace("    >>> add(1, 1)\n    2\n", "    >>> add(3, 3)\n    6\n").replace("return a + b", "return a + b + 1");
    const [now] = doctestExamples([after]);
    expect(rewrittenDoctests("pkg/calc.py", tip ?? {}, now ?? {})).toEqual([
      { file: "pkg/calc.py", line: 4, message: "changes what the doctest example `add(2, 2)` in the docstring of add expects: the team's doctests judge the work" },
      { file: "pkg/calc.py", message: "removes the doctest example `add(1, 1)` from the docstring of add: the team's doctests judge the work" },
    ]);
    const [kept] = doctestExamples([before.replace("return a + b", "return b + a")]);
    expect(rewrittenDoctests("pkg/calc.py", tip ?? {}, kept ?? {})).toEqual([]);
  });

  it("let a docstring whose doctest failed at the tip be fixed", () => {
    const [now] = doctestExamples([before.replace("    4\n", "    5\n")]);
    expect(rewrittenDoctests("pkg/calc.py", tip ?? {}, now ?? {}, new Set(["add"]))).toEqual([]);
  });
});
