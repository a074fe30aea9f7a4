import { describe, expect, it } from "vitest";
import { leftForRunner } from "../../src/guards/runner-state.js";

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
