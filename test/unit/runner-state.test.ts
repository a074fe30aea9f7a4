import { describe, expect, it } from "vitest";
import { firstDifference, leftForRunner } from "../../src/guards/runner-state.js";

describe("what a tests run must not start with", () => {
  it("removes what appeared since the tests runs began, and every runner configuration, plugin entry point and bytecode file whenever it appeared", () => {
    const before = new Set(["dist/index.js", "pkg/generated.py", "build/conftest.py", "gen/x.dist-info/entry_points.txt", "tests/__pycache__/test_a.cpython-311.pyc"]);
    const now = [...before, "conftest.py", "tests/helper_left.py", ".pytest_cache/v/cache/nodeids", "pytest.toml", "vitest.config.ts"];
    expect(leftForRunner(before, now).sort()).toEqual(
      [
        ".pytest_cache/v/cache/nodeids",
        "build/conftest.py",
        "conftest.py",
        "gen/x.dist-info/entry_points.txt",
        "pytest.toml",
        "tests/__pycache__/test_a.cpython-311.pyc",
        "tests/helper_left.py",
        "vitest.config.ts",
      ].sort(),
    );
  });

  it("honest: what a build made before the tests stays", () => {
    const before = new Set(["dist/index.js", "pkg/generated.py", "coverage/lcov.info"]);
    expect(leftForRunner(before, [...before])).toEqual([]);
  });
});

describe("the installed packages between tests runs", () => {
  it("names the first file added, changed or removed, and nothing when they are the same", () => {
    const before = new Map([
      ["a/x.py", "10:1"],
      ["a/y.py", "5:1"],
    ]);
    expect(firstDifference(before, new Map(before))).toBeUndefined();
    expect(firstDifference(before, new Map([...before, ["a/zz.pth", "3:2"]]))).toBe("a/zz.pth");
    expect(
      firstDifference(
        before,
        new Map([
          ["a/x.py", "10:2"],
          ["a/y.py", "5:1"],
        ]),
      ),
    ).toBe("a/x.py"); // same size, new change time
    expect(firstDifference(before, new Map([["a/x.py", "10:1"]]))).toBe("a/y.py");
  });
});
