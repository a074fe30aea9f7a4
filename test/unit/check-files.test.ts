import { describe, expect, it } from "vitest";
import { checkFilePaths, executedScripts, namedPaths } from "../../src/guards/check-files.js";

describe("the files an invariant's check is made of", () => {
  it("are the relative paths its command names, from the surface's directory: a pytest node id's file, never a flag, a module or a placeholder", () => {
    expect(namedPaths("python3 -m pytest -q tests/test_x.py::test_y --junitxml={junit}", ".")).toEqual(["tests/test_x.py"]);
    expect(namedPaths("node checks/doubles.mjs && python3 -m pkg.check", "api")).toEqual(["api/checks/doubles.mjs"]);
    expect(namedPaths("FOO=1 python3 check.py ../outside.py /abs/x.py", ".")).toEqual(["check.py"]);
  });

  it("run as the tip has them where the candidate changed them: named, beside a named one in its own directory, or a test file not declared changed", () => {
    const changes = [
      { kind: "modified" as const, path: "scripts/check_add.py" },
      { kind: "modified" as const, path: "scripts/cases.json" },
      { kind: "modified" as const, path: "tests/data/add_cases.json" },
      { kind: "modified" as const, path: "tests/test_kept.py" },
      { kind: "modified" as const, path: "pkg/calc.py" },
      { kind: "modified" as const, path: "setup.py" },
      { kind: "added" as const, path: "scripts/new.py" },
    ];
    expect(checkFilePaths({ command: "python3 scripts/check_add.py", surfaceDir: ".", changes, changedTests: ["tests/test_kept.py"] })).toEqual([
      "scripts/cases.json",
      "scripts/check_add.py",
      "tests/data/add_cases.json",
    ]);
    // A check at the surface's root takes nothing beside it: the source lives there too.
    expect(checkFilePaths({ command: "python3 check.py", surfaceDir: ".", changes, changedTests: [] })).toEqual(["tests/data/add_cases.json", "tests/test_kept.py"]);
  });
});

describe("the scripts a gate's command runs", () => {
  it("are a relative path in a command's place, or an interpreter's first word after its options", () => {
    expect(executedScripts("PYTHONPATH=. python3 scripts/contract.py --strict", ".")).toEqual(["scripts/contract.py"]);
    expect(executedScripts("./ci/check.sh && node --no-warnings tools/verify.mjs x.json", ".")).toEqual(["ci/check.sh", "tools/verify.mjs"]);
    expect(executedScripts("bash scripts/lint.sh", "api")).toEqual(["api/scripts/lint.sh"]);
  });

  it("are not a file a tool only checks or reads, a module, inline code, or an absolute program", () => {
    expect(executedScripts("node --check src/calc.js", ".")).toEqual([]);
    expect(executedScripts("python3 -m mypy pkg/", ".")).toEqual([]);
    expect(executedScripts('python3 -c "import pkg"', ".")).toEqual([]);
    expect(executedScripts("tsc -p tsconfig.json && /usr/bin/env true", ".")).toEqual([]);
    expect(executedScripts("npx eslint src/", ".")).toEqual([]);
  });
});
