import { describe, expect, it } from "vitest";
import { NO_TEST_FACTS } from "../../src/gates/test-files.js";
import { describeVerdictTree, isTestSupport, readsToPutBack, verdictTreeOf } from "../../src/gates/verdict-tree.js";

const packet = { changedTests: ["tests/test_on_purpose.py"], retiredTests: ["tests/test_gone.py", "tests/test_kept.py::test_x"], deletablePaths: ["tests/old/**"] };
const tipFiles = ["pkg/__init__.py", "pkg/calc.py", "pkg/tests.py", "data/cases.json", "pkg/table.json", "checks/check_calc.py", "checks/helpers.py", "tests/__init__.py", "tests/test_calc.py"];
const base = { ...packet, tipFiles, planted: ["tests/test_planted.py"], tipReads: undefined, facts: NO_TEST_FACTS };

describe("the verdict tree of a change", () => {
  it("puts back the team's test files and test data it edited or removed, but not what it declared, retired whole, deleted as allowed, or planted", () => {
    const changes = [
      { kind: "modified" as const, path: "tests/test_calc.py" },
      { kind: "modified" as const, path: "tests/data/cases.json" },
      { kind: "deleted" as const, path: "tests/test_kept.py" },
      { kind: "modified" as const, path: "tests/test_on_purpose.py" },
      { kind: "deleted" as const, path: "tests/test_gone.py" },
      { kind: "deleted" as const, path: "tests/old/test_legacy.py" },
      { kind: "modified" as const, path: "tests/test_planted.py" },
      { kind: "modified" as const, path: "pkg/calc.py" },
    ];
    const tree = verdictTreeOf({ ...base, changes });
    expect(tree.putBack).toEqual([
      { path: "tests/test_calc.py", why: "test" },
      { path: "tests/data/cases.json", why: "test" },
      { path: "tests/test_kept.py", why: "test" },
    ]);
    expect(tree.ownTests).toEqual(["tests/test_calc.py"]);
    expect(tree.leftOut).toEqual([]);
  });

  it("leaves out the change's new test modules and the package initialisers it adds beside the team's tests; its new test modules are its own tests", () => {
    const changes = [
      { kind: "added" as const, path: "tests/test_aaa_setup.py" },
      { kind: "added" as const, path: "tests/fixtures/more.json" },
      { kind: "added" as const, path: "checks/__init__.py" },
      { kind: "added" as const, path: "pkg/sub/__init__.py" },
      { kind: "added" as const, path: "pkg/sub/core.py" },
    ];
    const facts = { collected: ["checks/check_calc.py", "tests/test_calc.py"], patterns: [], doctestModules: false, roots: ["checks"] };
    const tree = verdictTreeOf({ ...base, facts, changes });
    expect(tree.leftOut).toEqual(["tests/test_aaa_setup.py", "tests/fixtures/more.json", "checks/__init__.py"]);
    expect(tree.ownTests).toEqual(["tests/test_aaa_setup.py"]);
    expect(tree.putBack).toEqual([]);
  });

  it("what a test is comes from the runner: a collected file of any name, a runner pattern, and what else lives where its configuration puts the tests", () => {
    const facts = { collected: ["pkg/tests.py", "checks/check_calc.py"], patterns: ["checks/**/check_*.py"], doctestModules: false, roots: ["checks"] };
    const changes = [
      { kind: "modified" as const, path: "pkg/tests.py" },
      { kind: "modified" as const, path: "checks/helpers.py" },
      { kind: "added" as const, path: "checks/check_new.py" },
      { kind: "modified" as const, path: "pkg/calc.py" },
    ];
    const tree = verdictTreeOf({ ...base, facts, changes });
    expect(tree.putBack).toEqual([
      { path: "pkg/tests.py", why: "test" },
      { path: "checks/helpers.py", why: "test-dir" },
    ]);
    expect(tree.leftOut).toEqual(["checks/check_new.py"]);
    expect(tree.ownTests).toEqual(["pkg/tests.py", "checks/check_new.py"]);
  });

  it("puts back data the tip's tests read (traced), never source code or a manifest; a doctest module is the code under test", () => {
    const changes = ["data/cases.json", "pkg/table.json", "pkg/calc.py", "pyproject.toml", "README.md"].map((path) => ({ kind: "modified" as const, path }));
    const tipReads = ["data/cases.json", "pkg/calc.py", "pyproject.toml", "pkg/table.json"];
    const facts = { collected: ["pkg/calc.py"], patterns: [], doctestModules: true, roots: [] };
    const tree = verdictTreeOf({ ...base, facts, tipReads, changes });
    expect(tree.putBack).toEqual([
      { path: "data/cases.json", why: "read" },
      { path: "pkg/table.json", why: "read" },
    ]);
    expect(verdictTreeOf({ ...base, changes: [{ kind: "modified", path: "pkg/table.json" }], tipReads, changedTests: ["pkg/*.json"] }).putBack).toEqual([]);
  });

  it("a read of the candidate's run adds what the tip's reads did not name, once", () => {
    const changes = ["data/cases.json", "checks/limits.csv", "pkg/calc.py"].map((path) => ({ kind: "modified" as const, path }));
    const tree = { putBack: [{ path: "data/cases.json", why: "read" as const }], leftOut: [], ownTests: [] };
    expect(readsToPutBack(tree, ["data/cases.json", "checks/limits.csv", "pkg/calc.py", "tests/new.json"], { ...base, changes })).toEqual([{ path: "checks/limits.csv", why: "read" }]);
  });

  it("says what the verdict ran on", () => {
    expect(describeVerdictTree({ putBack: [{ path: "a.json", why: "read" }], leftOut: ["tests/test_x.py"] })).toBe(
      "with the tip's versions of the files that judge the work which the change edited (a.json) and without the change's new test modules (tests/test_x.py)",
    );
  });
});

describe("a source module written for the tests", () => {
  it("is one that imports a test framework or an assertion library, or defines assertion helpers", () => {
    expect(isTestSupport("pkg/testing.py", "def assert_adds(add, a, b, total):\n    assert add(a, b) == total\n")).toBe(true);
    expect(isTestSupport("pkg/fixtures.py", "import pytest\n\n@pytest.fixture\ndef ten():\n    return 10\n")).toBe(true);
    expect(isTestSupport("src/helpers.ts", 'import { expect } from "vitest";\nexport const same = (a, b) => expect(a).toEqual(b);\n')).toBe(true);
    expect(
      isTestSupport("src/expect.js", "import assert from 'node:assert';\nexport function assertSorted(list) {\n  for (let i = 1; i < list.length; i++) assert.ok(list[i - 1] <= list[i]);\n}\n"),
    ).toBe(true);
  });

  it("is not the code under test, an assert inside it or not", () => {
    expect(isTestSupport("pkg/calc.py", "def add(a, b):\n    assert isinstance(a, int)\n    return a + b\n")).toBe(false);
    expect(isTestSupport("pkg/check.py", "from unittest.mock import sentinel\n\ndef check(x):\n    if not x:\n        raise AssertionError(x)\n")).toBe(false);
    // zod's util.ts: type-level helpers named assert… that assert nothing at run time.
    expect(
      isTestSupport(
        "src/v4/core/util.ts",
        "export function assertEqual<A, B>(val: AssertEqual<A, B>): AssertEqual<A, B> {\n  return val;\n}\nexport function assertNever(_x: never): never {\n  throw new Error();\n}\nexport const x = 1;\n",
      ),
    ).toBe(false);
    expect(isTestSupport("pkg/typing_helpers.py", "def assert_never(value):\n    raise AssertionError(value)\n")).toBe(false);
    // fast-json-stringify's index.js checks its options with node:assert: a library, not a test helper.
    expect(isTestSupport("index.js", "'use strict'\nconst assert = require('node:assert')\nfunction build(schema) { assert(schema) }\n")).toBe(false);
    expect(isTestSupport("src/calc.ts", "export function add(a: number, b: number) { return a + b; }\n")).toBe(false);
    expect(isTestSupport("data/table.json", '{"assert": true}')).toBe(false);
  });
});
