import { describe, expect, it } from "vitest";
import { allScopeAtTip, contentFindings, importedModules, tipIndex } from "../../src/packet/content-lint.js";
import type { Packet } from "../../src/packet/types.js";

function packet(fields: Partial<Packet>): Packet {
  return {
    id: "P01",
    slug: "p01",
    goal: "g",
    specCommit: "c",
    specPath: "SPEC.md",
    surface: undefined,
    tier: "standard",
    reviewer: "standard",
    gate: "auto",
    requires: [],
    repairs: [],
    maxAttempts: 3,
    forbiddenPaths: [],
    allowedPaths: ["src/column.js"],
    deletablePaths: [],
    retiredTests: [],
    changedTests: [],
    supportFiles: [],
    brief: "",
    invariants: [{ id: "i", critical: true, assert: "a" }],
    file: "packets/P01.toml",
    sha256: "s",
    planted: [],
    ...fields,
  };
}

const TIP = ["src/amount.js", "src/pkg/__init__.py", "src/pkg/core.py", "test/smoke.test.js", "lib/__init__.py", "README.md"];
const findings = (fields: Partial<Packet>, more: { planted?: Record<string, string>; dependencyScope?: string[] } = {}) =>
  contentFindings({ packet: packet(fields), tip: tipIndex(TIP), planted: new Map(Object.entries(more.planted ?? {})), dependencyScope: more.dependencyScope ?? [] });

describe("content lint", () => {
  it("names an allowed_paths pattern that can match nothing: its first directory is not at the tip", () => {
    expect(findings({ allowedPaths: ["scr/column.js"] })).toEqual([
      'allowed_paths: "scr/column.js" matches no path at the tip, and scr/ does not exist there (a typo? a new top-level directory is fine)',
    ]);
    expect(findings({ allowedPaths: ["tset/**/*.js"] })).toHaveLength(1);
  });

  it("stays quiet on scope under an existing directory, top-level files, leading globs, and directories a required packet makes", () => {
    expect(findings({ allowedPaths: ["src/column.js", "src/new/deep/x.js", "CHANGELOG.md", "**/*.snap", "test/**"] })).toEqual([]);
    expect(findings({ allowedPaths: ["docs/guide.md"] }, { dependencyScope: ["docs/index.md"] })).toEqual([]);
  });

  it("names a file in the brief that is neither at the tip nor in scope", () => {
    const brief = "Add `src/colum.js` using `parseAmount(row[key])` from `src/amount.js`; `os.path`, `application/json` and `npm test` are not files, `sr/` is.";
    expect(findings({ brief })).toEqual([
      "brief: names `src/colum.js`, which is not at the tip and is not in the packet's scope to create",
      "brief: names `sr/`, which is not at the tip and is not in the packet's scope to create",
    ]);
  });

  it("stays quiet on briefs naming files at the tip, in scope, planted, or made by a required packet", () => {
    const brief = "Add `src/column.js` beside `src/amount.js` and `src/pkg/`; the tests in `test/column.test.js` are written; `docs/x.md` comes first.";
    expect(findings({ brief, planted: ["test/column.test.js"] }, { dependencyScope: ["docs/**"] })).toEqual([]);
    // A packet without a scope may create anything.
    expect(findings({ brief: "Add `tools/new.py`.", allowedPaths: undefined })).toEqual([]);
    expect(findings({ brief: "Add `tools/new.py`.", allowedPaths: undefined }, { dependencyScope: ["docs/**"] })).toEqual([]); // with a required packet too
  });

  it("names a planted Python test importing a module of the project that neither exists nor may be created", () => {
    const test = "import os\nimport numpy as np\nfrom pkg.core import run\nfrom pkg.extra import more\n\ndef test_it():\n    from lib.missing import x\n";
    expect(findings({ allowedPaths: ["src/pkg/core.py"] }, { planted: { "tests/test_it.py": test } })).toEqual([
      "tests/test_it.py: imports pkg.extra, which is not at the tip and which the packet may not create",
      "tests/test_it.py: imports lib.missing, which is not at the tip and which the packet may not create",
    ]);
  });

  it("stays quiet on imports of modules the packet creates, existing ones, and anything not the project's", () => {
    const test = "from src.pkg.core import run\nfrom pkg.extra import more\nimport pytest\nfrom collections import OrderedDict\n";
    expect(findings({ allowedPaths: ["src/pkg/extra.py"] }, { planted: { "tests/test_it.py": test } })).toEqual([]);
  });

  it("reads every absolute import, at any indentation, with aliases and lists", () => {
    expect(importedModules("import a.b, c as d\n  from e.f import g\nfrom . import h\nfrom .i import j\nimport k  # note\n")).toEqual(["a.b", "c", "e.f", "k"]);
  });

  it("says the whole scope is at the tip only for a scope of named files that all exist", () => {
    const exists = (path: string) => TIP.includes(path);
    expect(allScopeAtTip(["src/amount.js", "README.md"], exists)).toEqual(["src/amount.js", "README.md"]);
    expect(allScopeAtTip(["src/amount.js", "src/new.js"], exists)).toBeUndefined();
    expect(allScopeAtTip(["src/amount.js", "src/**"], exists)).toBeUndefined(); // a pattern may create more
    expect(allScopeAtTip(undefined, exists)).toBeUndefined();
  });
});
