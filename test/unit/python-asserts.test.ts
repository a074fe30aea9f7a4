import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { weakenedAsserts } from "../../src/guards/assert-facts.js";
import { pythonAssertFacts } from "../../src/guards/python-asserts.js";

const python = spawnSync("python3", ["--version"]).status === 0;
if (!python) console.warn("skipping the parsed-assertion tests: python3 is not on PATH");

const BEFORE = "def test_add():\n    assert add(2, 2) == 4\n    assert add(0, 0) == 0\n";

/** What the parsed rules find when the file goes from `before` to `after`. */
function weakened(before: string, after: string): string[] {
  const [was, now] = pythonAssertFacts([before, after]);
  return weakenedAsserts(was, now).map((finding) => finding.message);
}

describe.skipIf(!python)("assertions read by Python's parser", () => {
  it("fire on an assert made conditional, made a tuple or a constant, caught and ignored, or moved out of the test's body", () => {
    expect(weakened(BEFORE, "def test_add():\n    if False:\n        assert add(2, 2) == 4\n    assert add(0, 0) == 0\n")).toEqual([
      '"test_add" has fewer assertions that always run (2 before, 1 now): made conditional (under an if, a loop or a try)',
    ]);
    expect(weakened(BEFORE, "def test_add():\n    if add(2, 2) == 5:\n        return\n    assert add(2, 2) == 4\n    assert add(0, 0) == 0\n")).toEqual([
      '"test_add" has fewer assertions that always run (2 before, 0 now): made conditional (under an if, a loop or a try)',
    ]);
    expect(weakened(BEFORE, 'def test_add():\n    assert (add(2, 2) == 4, "adds")\n    assert add(0, 0) == 0\n')).toEqual([
      'makes an assertion of "test_add" a tuple or a constant, which is always true',
    ]);
    expect(weakened(BEFORE, "def test_add():\n    try:\n        assert add(2, 2) == 4\n    except AssertionError:\n        pass\n    assert add(0, 0) == 0\n")).toEqual([
      'catches and ignores the failure of an assertion of "test_add"',
    ]);
    expect(weakened(BEFORE, "def _never():\n    assert add(2, 2) == 4\n\ndef test_add():\n    assert add(0, 0) == 0\n")).toEqual([
      '"test_add" has fewer assertions that always run (2 before, 1 now): removed or moved out of the test\'s body',
    ]);
    expect(
      weakened(
        "class TestAdd:\n    def test_it(self):\n        self.assertEqual(add(1, 1), 2)\n",
        "class TestAdd:\n    def test_it(self):\n        if 0:\n            self.assertEqual(add(1, 1), 2)\n",
      ),
    ).toHaveLength(1);
  });

  it("stay quiet on honest restructuring: reformatting, more assertions, a loop beside them, a parametrized fold, a re-raise", () => {
    expect(weakened(BEFORE, "def test_add():\n    assert add(\n        2, 2\n    ) == 4\n    assert add(0, 0) == 0\n")).toEqual([]);
    expect(weakened(BEFORE, `${BEFORE}    for n in range(3):\n        assert add(n, 0) == n\n`)).toEqual([]);
    expect(weakened(BEFORE, '@pytest.mark.parametrize("a, want", [(2, 4), (0, 0)])\ndef test_add(a, want):\n    assert add(a, a) == want\n')).toEqual([]);
    expect(weakened(BEFORE, "def test_add():\n    try:\n        assert add(2, 2) == 4\n    except AssertionError:\n        log()\n        raise\n    assert add(0, 0) == 0\n")).toEqual([]);
    expect(weakened(BEFORE, "def test_add(:\n")).toEqual([]); // a file that does not parse is judged elsewhere
  });
});
