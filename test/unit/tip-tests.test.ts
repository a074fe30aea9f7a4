import { describe, expect, it } from "vitest";
import { tipJudgedPaths } from "../../src/guards/tip-tests.js";

describe("the team's test files the tip's versions judge a change with", () => {
  const packet = { changedTests: ["tests/test_on_purpose.py"], retiredTests: ["tests/test_gone.py", "tests/test_kept.py::test_x"], deletablePaths: ["tests/old/**"] };
  it("are the test files and test data it edited or removed, but not what it added, declared, retired whole, deleted as allowed, or planted", () => {
    const changes = [
      { kind: "modified" as const, path: "tests/test_calc.py" },
      { kind: "modified" as const, path: "tests/data/cases.json" },
      { kind: "deleted" as const, path: "tests/test_kept.py" },
      { kind: "added" as const, path: "tests/test_new.py" },
      { kind: "modified" as const, path: "tests/test_on_purpose.py" },
      { kind: "deleted" as const, path: "tests/test_gone.py" },
      { kind: "deleted" as const, path: "tests/old/test_legacy.py" },
      { kind: "modified" as const, path: "tests/test_planted.py" },
      { kind: "modified" as const, path: "pkg/calc.py" },
    ];
    expect(tipJudgedPaths(changes, packet, ["tests/test_planted.py"])).toEqual(["tests/data/cases.json", "tests/test_calc.py", "tests/test_kept.py"]);
  });
});
