import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "../../src/gates/diff-parse.js";
import { checkScope } from "../../src/guards/scope.js";
import { checkTamper, pytestSectionLines } from "../../src/guards/tamper.js";
import { checkUntouched } from "../../src/guards/untouched.js";
import { parseSize } from "../../src/util/size.js";

const entry = (sha: string, mode = "100644") => ({ sha, mode });

describe("untouched", () => {
  const before = new Map([
    ["tests/test_a.py", entry("a1")],
    ["api/conftest.py", entry("c1")],
    ["api/x.py", entry("x1")],
  ]);
  const input = { before, planted: ["tests/test_a.py"], forbidden: ["api/conftest.py", "api/migrations/**"] };

  it("stays quiet when planted and forbidden files are byte-identical", () => {
    const after = new Map([...before, ["api/x.py", entry("x2")], ["api/new.py", entry("n")]]);
    expect(checkUntouched({ ...input, after }).status).toBe("pass");
  });

  it("fires on an edit, a deletion, a mode change and a file created under a forbidden glob", () => {
    const edited = checkUntouched({ ...input, after: new Map([...before, ["tests/test_a.py", entry("a2")]]) });
    expect(edited.findings).toEqual([{ file: "tests/test_a.py", message: "planted file was modified" }]);
    const deleted = checkUntouched({ ...input, after: new Map([...before].filter(([path]) => path !== "api/conftest.py")) });
    expect(deleted.findings).toEqual([{ file: "api/conftest.py", message: "forbidden path was deleted or renamed" }]);
    const mode = checkUntouched({ ...input, after: new Map([...before, ["tests/test_a.py", entry("a1", "100755")]]) });
    expect(mode.findings[0]?.message).toBe("planted file changed mode 100644 → 100755");
    const created = checkUntouched({ ...input, after: new Map([...before, ["api/migrations/0002.py", entry("m")]]) });
    expect(created).toMatchObject({ status: "fail", findings: [{ file: "api/migrations/0002.py", message: "forbidden path was created" }] });
  });
});

describe("scope", () => {
  const base = { allowed: ["api/loader/**"], deletable: ["api/old.py"], planted: ["api/tests/test_loader.py"] };

  it("fires on a nested repository the attempt made and on a gitlink in its tree, naming each; quiet on plain files", () => {
    const changes = [{ kind: "added" as const, path: "api/loader/lib" }];
    expect(checkScope({ ...base, changes, nested: ["api/loader/evil"] }).findings.map((finding) => finding.file)).toEqual(["api/loader/evil"]);
    expect(checkScope({ ...base, changes, modes: new Map([["api/loader/lib", "160000"]]) }).findings[0]?.message).toMatch(/nested git repository \(a gitlink\)/);
    expect(checkScope({ ...base, changes, modes: new Map([["api/loader/lib", "100644"]]), nested: [] }).status).toBe("pass");
  });

  it("stays quiet on changes inside allowed_paths and deletions of deletable_paths", () => {
    const report = checkScope({
      ...base,
      changes: [
        { kind: "added", path: "api/loader/csv.py" },
        { kind: "deleted", path: "api/old.py" },
        { kind: "modified", path: "api/tests/test_loader.py" },
      ],
    });
    expect(report.status).toBe("pass");
  });

  it("fires on a change outside allowed_paths and a deletion not allowed", () => {
    const report = checkScope({
      ...base,
      changes: [
        { kind: "modified", path: "api/app.py" },
        { kind: "deleted", path: "api/loader/util.py" },
      ],
    });
    expect(report.findings).toEqual([
      { file: "api/app.py", message: "modified outside allowed_paths" },
      { file: "api/loader/util.py", message: "deleted, but it is not in deletable_paths" },
    ]);
  });

  it("allows any path when no positive scope is declared", () => {
    expect(checkScope({ ...base, allowed: undefined, changes: [{ kind: "added", path: "anything/at/all.py" }] }).status).toBe("pass");
  });

  it("fires on a path that could pass as an option, and on a file over max_file_size; quiet under it", () => {
    const option = checkScope({ ...base, allowed: undefined, changes: [{ kind: "added", path: "--extend-exclude=*.py" }] });
    expect(option.findings[0]?.message).toContain('starting with "-"');
    const sizes = new Map([
      ["api/loader/big.bin", 11 * 1024 ** 2],
      ["api/loader/small.py", 100],
    ]);
    const big = checkScope({
      ...base,
      sizes,
      maxFileSize: 10 * 1024 ** 2,
      changes: [
        { kind: "added", path: "api/loader/big.bin" },
        { kind: "added", path: "api/loader/small.py" },
      ],
    });
    expect(big.findings).toEqual([{ file: "api/loader/big.bin", message: "is 11 MB, over [limits] max_file_size (10 MB)" }]);
  });
});

describe("scope: symbolic links", () => {
  it("fires on a link that leaves the repository, stays quiet on one inside it", () => {
    const changes = [
      { kind: "added" as const, path: "src/out" },
      { kind: "added" as const, path: "src/abs" },
      { kind: "added" as const, path: "src/in" },
    ];
    const links = new Map([
      ["src/out", "../../home/user/.ssh"],
      ["src/abs", "/etc/passwd"],
      ["src/in", "../docs/readme.md"],
    ]);
    const report = checkScope({ changes, allowed: undefined, deletable: [], planted: [], links });
    expect(report.findings.map((finding) => finding.file)).toEqual(["src/out", "src/abs"]);
  });

  it("fires on a link to what the commit does not hold (left beside it, missing where it lands); quiet on one to a tracked file or directory", () => {
    const changes = ["src/venv", "src/impl.py", "src/doc", "src/data"].map((path) => ({ kind: "added" as const, path }));
    const links = new Map([
      ["src/venv", "../.venv/lib"],
      ["src/impl.py", "../.tox/impl.py"],
      ["src/doc", "../docs/readme.md"],
      ["src/data", "../tests/data/"],
    ]);
    const modes = new Map([...links.keys(), "docs/readme.md", "tests/data/cases.json"].map((path) => [path, links.has(path) ? "120000" : "100644"]));
    const report = checkScope({ changes, allowed: undefined, deletable: [], planted: [], links, modes });
    expect(report.findings).toEqual([
      { file: "src/venv", message: "is a symbolic link to .venv/lib, which the commit does not hold: commit what it points at, or drop the link" },
      { file: "src/impl.py", message: "is a symbolic link to .tox/impl.py, which the commit does not hold: commit what it points at, or drop the link" },
    ]);
  });
});

describe("parseSize", () => {
  it("reads bytes and binary units, and refuses anything else", () => {
    expect(parseSize("10MB")).toBe(10 * 1024 ** 2);
    expect(parseSize("512 kb")).toBe(512 * 1024);
    expect(parseSize(2048)).toBe(2048);
    for (const bad of ["10 parsecs", "-1MB", 0, 1.5, "MB"]) expect(parseSize(bad)).toBeUndefined();
  });
});

function diff(path: string, hunks: string, header = "index 1..2 100644"): string {
  return `diff --git a/${path} b/${path}\n${header}\n--- a/${path}\n+++ b/${path}\n${hunks}\n`;
}

describe("tamper", () => {
  const tamper = (text: string, allowed?: string[]) => checkTamper({ files: parseUnifiedDiff(text), allowed });

  it("stays quiet on honest test additions and source edits", () => {
    const text =
      diff("tests/test_loader.py", "@@ -10,0 +11,3 @@\n+def test_new_case():\n+    assert load('1.000') == 1000\n+    assert load('2') == 2") + diff("api/loader.py", "@@ -1 +1 @@\n-x = 1\n+x = 2");
    expect(tamper(text).status).toBe("pass");
  });

  it("fires on skip and xfail markers, naming file and line", () => {
    expect(tamper(diff("tests/test_a.py", "@@ -4,0 +5 @@\n+@pytest.mark.skip(reason='later')")).findings).toEqual([{ file: "tests/test_a.py", line: 5, message: "adds a pytest skip/xfail marker" }]);
    expect(tamper(diff("tests/test_a.py", "@@ -4,0 +5 @@\n+@pytest.mark.xfail")).status).toBe("fail");
    const skipCall = ["it", "skip"].join("."); // spelled apart so checks for committed .skip( do not trip on this fixture
    expect(tamper(diff("web/a.test.ts", `@@ -2 +2 @@\n-it('works', () => {\n+${skipCall}('works', () => {`)).findings[0]).toMatchObject({ line: 2, message: "adds a skipped or todo test" });
    // ava's default names: test.js at the root and test-*.js are tests (a skip there fires; the same line in a source module does not).
    const avaSkip = ["test", "skip"].join(".");
    for (const file of ["test.js", "lib/test-parse.mjs"])
      expect(tamper(diff(file, `@@ -2 +2 @@\n-test('parses', t => {\n+${avaSkip}('parses', t => {`)).findings[0], file).toMatchObject({ line: 2, message: "adds a skipped or todo test" });
    expect(tamper(diff("lib/parse.js", `@@ -2 +2 @@\n-test('parses', t => {\n+${avaSkip}('parses', t => {`)).status).toBe("pass");
    expect(tamper(diff("test/a.test.js", "@@ -2 +2 @@\n-test('x', () => {\n+test('x', { skip: true }, () => {")).status).toBe("fail");
  });

  it("fires on a deleted test function and on fewer assertions", () => {
    const deleted = tamper(diff("tests/test_a.py", "@@ -3,3 +2,0 @@\n-def test_rounding():\n-    assert r(1.5) == 2\n-    assert r(2.5) == 2"));
    expect(deleted.findings.map((f) => f.message)).toEqual(['deletes the test "test_rounding"', "lowers the number of assertions (2 removed, 0 added)"]);
    const weaker = tamper(diff("tests/test_a.py", "@@ -5,2 +5,1 @@\n-    assert a == 1\n-    assert b == 2\n+    assert a == 1"));
    expect(weaker.findings.map((f) => f.message)).toEqual(["lowers the number of assertions (2 removed, 1 added)"]);
  });

  it("does not call a renamed-in-place test deleted", () => {
    expect(tamper(diff("tests/test_a.py", "@@ -3 +3 @@\n-def test_x():\n+def test_x():  # clearer")).status).toBe("pass");
  });

  it("fires on assertions that cannot fail and on fixtures or setup that could fake behaviour", () => {
    expect(tamper(diff("tests/test_a.py", "@@ -3,0 +4 @@\n+    assert True")).findings[0]?.message).toBe("adds an assertion that cannot fail");
    expect(tamper(diff("web/a.spec.ts", "@@ -3,0 +4 @@\n+  expect(true).toBe(true);")).status).toBe("fail");
    expect(tamper(diff("tests/test_a.py", "@@ -1,0 +2 @@\n+@pytest.fixture(autouse=True)")).findings[0]?.message).toBe("adds an autouse fixture");
  });

  it("stays quiet on honest work: importorskip and a local autouse fixture in a new test module, a parametrize refactor that keeps every case", () => {
    const created = "new file mode 100644\nindex 0000000..2";
    const optional = diff("tests/test_yaml.py", "@@ -0,0 +1,4 @@\n+yaml = pytest.importorskip(\"yaml\")\n+\n+def test_load():\n+    assert yaml.safe_load('a: 1') == {'a': 1}", created);
    expect(tamper(optional).status).toBe("pass");
    const local = diff(
      "tests/test_clock.py",
      "@@ -0,0 +1,5 @@\n+@pytest.fixture(autouse=True)\n+def frozen(monkeypatch):\n+    monkeypatch.setattr(time, 'time', lambda: 0)\n+\n+def test_now():\n+    assert now() == 0",
      created,
    );
    expect(tamper(local).status).toBe("pass");
    const refactor = diff(
      "tests/test_round.py",
      [
        "@@ -3,4 +3,3 @@",
        "-def test_round():",
        "-    assert r(1.5) == 2",
        "-    assert r(2.5) == 2",
        "-    assert r(3.5) == 4",
        "+@pytest.mark.parametrize('x, want', [(1.5, 2), (2.5, 2), (3.5, 4)])",
        "+def test_round(x, want):",
        "+    assert r(x) == want",
      ].join("\n"),
    );
    expect(tamper(refactor).status).toBe("pass");
    const multiline = diff(
      "tests/test_round.py",
      [
        "@@ -3,4 +3,7 @@",
        "-def test_round():",
        "-    assert r(1.5) == 2",
        "-    assert r(2.5) == 2",
        "+@pytest.mark.parametrize('x, want', [",
        "+    (1.5, 2),",
        "+    (2.5, 2),",
        "+])",
        "+def test_round(x, want):",
        "+    assert r(x) == want",
      ].join("\n"),
    );
    expect(tamper(multiline).status).toBe("pass");
  });

  it("still fires on importorskip and autouse in an existing module or conftest, and on a refactor that drops cases", () => {
    expect(tamper(diff("tests/test_yaml.py", '@@ -1,0 +2 @@\n+yaml = pytest.importorskip("yaml")')).status).toBe("fail");
    expect(tamper(diff("tests/conftest.py", "@@ -0,0 +1 @@\n+@pytest.fixture(autouse=True)", "new file mode 100644\nindex 0000000..2"), ["tests/conftest.py"]).findings[0]?.message).toBe(
      "adds an autouse fixture",
    );
    const dropped = diff(
      "tests/test_round.py",
      [
        "@@ -3,4 +3,3 @@",
        "-def test_round():",
        "-    assert r(1.5) == 2",
        "-    assert r(2.5) == 2",
        "-    assert r(3.5) == 4",
        "+@pytest.mark.parametrize('x, want', [(1.5, 2)])",
        "+def test_round(x, want):",
        "+    assert r(x) == want",
      ].join("\n"),
    );
    expect(tamper(dropped).findings.map((finding) => finding.message)).toEqual(["lowers the number of assertions (3 removed, 1 added)"]);
  });

  it("fires on a pytest_plugins line in a new or existing test module, unless allowed_paths names the file", () => {
    const created = "new file mode 100644\nindex 0000000..2";
    expect(tamper(diff("tests/test_more.py", '@@ -0,0 +1 @@\n+pytest_plugins = ["pkg.checks"]', created), ["tests/**", "pkg/**"]).findings).toEqual([
      { file: "tests/test_more.py", line: 1, message: expect.stringContaining("loads a pytest plugin by name (pytest_plugins)") },
    ]);
    expect(tamper(diff("tests/test_calc.py", '@@ -1,0 +2 @@\n+pytest_plugins += ["pkg.checks"]')).status).toBe("fail");
    expect(tamper(diff("tests/test_more.py", '@@ -0,0 +1 @@\n+pytest_plugins = ["pkg.checks"]', created), ["tests/test_more.py"]).status).toBe("pass");
    expect(tamper(diff("pkg/plugins.py", '@@ -0,0 +1 @@\n+pytest_plugins = ["pkg.checks"]', created)).status).toBe("pass");
  });

  it("fires on test-runner configuration outside allowed_paths, and not inside it", () => {
    const conftest = diff("api/conftest.py", "@@ -1,0 +2 @@\n+import os");
    expect(tamper(conftest).findings[0]).toMatchObject({ file: "api/conftest.py", message: expect.stringContaining("test-runner configuration") });
    expect(tamper(diff("vitest.config.ts", "@@ -3 +3 @@\n-  include: ['test/**']\n+  include: []"), ["src/**"]).status).toBe("fail");
    expect(tamper(diff("vitest.config.ts", "@@ -3 +3 @@\n-a\n+b"), ["vitest.config.ts"]).status).toBe("pass");
  });

  it("fires on a new module at the surface's root that shadows a test tool or the standard library, not on one deeper or an existing one", () => {
    const created = "new file mode 100644\nindex 0000000..2";
    expect(tamper(diff("pytest.py", "@@ -0,0 +1 @@\n+def main(): pass", created)).findings[0]?.message).toContain('shadows the test tool "pytest"');
    expect(tamper(diff("json/__init__.py", "@@ -0,0 +1 @@\n+loads = eval", created)).findings[0]?.message).toContain(`shadows the standard library's "json"`);
    expect(checkTamper({ files: parseUnifiedDiff(diff("api/random.py", "@@ -0,0 +1 @@\n+x = 4", created)), allowed: undefined, surfaceDir: "api" }).status).toBe("fail");
    expect(tamper(diff("pkg/json.py", "@@ -0,0 +1 @@\n+x = 1", created)).status).toBe("pass");
    expect(tamper(diff("json.py", "@@ -1 +1 @@\n-x = 1\n+x = 2")).status).toBe("pass");
    expect(tamper(diff("double.py", "@@ -0,0 +1 @@\n+x = 1", created)).status).toBe("pass");
  });

  it("fires on everything that steers the runner unless allowed_paths names it: a glob does not", () => {
    const created = "new file mode 100644\nindex 0000000..2";
    const messages = (text: string, allowed?: string[]) => tamper(text, allowed).findings.map((finding) => `${finding.file}: ${finding.message}`);
    for (const name of ["pytest.toml", ".pytest.toml", "tests/conftest.py", "vitest.config.ts"]) {
      const edit = diff(name, "@@ -0,0 +1,2 @@\n+[pytest]\n+addopts = -p evil", created);
      expect(messages(edit, ["**"])).toEqual([`${name}: edits test-runner configuration not named in the packet's allowed_paths`]);
      expect(tamper(edit, [name]).status).toBe("pass");
    }
    const entryPoint = diff("src/evil-1.0.dist-info/entry_points.txt", "@@ -0,0 +1,2 @@\n+[pytest11]\n+evil = evil", created);
    expect(messages(entryPoint, ["src/**"])).toEqual([expect.stringContaining("adds or edits a Python start-up hook or plugin entry point")]);
    expect(tamper(entryPoint, ["src/evil-1.0.dist-info/**"]).status).toBe("pass");
    for (const name of ["src/evil.pth", "sitecustomize.py", "lib/usercustomize.py", "x.egg-info/entry_points.txt"]) {
      expect(tamper(diff(name, "@@ -0,0 +1 @@\n+import evil", created), ["**"]).status).toBe("fail");
    }
    const script = diff("package.json", '@@ -3 +3 @@\n-    "test": "vitest run",\n+    "test": "vitest run --passWithNoTests -t nothing",');
    expect(messages(script, ["**"])).toEqual(["package.json: edits the test script or a test runner's configuration, not named in the packet's allowed_paths"]);
    expect(tamper(script, ["package.json"]).status).toBe("pass");
    expect(tamper(diff("package.json", '@@ -2 +2 @@\n-  "version": "1.0.0",\n+  "version": "1.1.0",'), ["**"]).status).toBe("pass");
  });

  it("fires on a new module that shadows one of the project's own from another directory, not on a new module of its own", () => {
    const created = "new file mode 100644\nindex 0000000..2";
    const tipFiles = ["src/calc/__init__.py", "src/calc/core.py", "tests/test_calc.py", "tests/conftest.py", "helpers.py"];
    const check = (path: string) => checkTamper({ files: parseUnifiedDiff(diff(path, "@@ -0,0 +1 @@\n+def add(a, b): return 5", created)), allowed: ["**"], tipFiles });
    expect(check("tests/calc.py").findings.map((finding) => finding.message)).toEqual([
      'shadows the project\'s module "calc" (imported from src/): a runner that puts this directory first on its path imports it instead',
    ]);
    expect(check("tests/calc/__init__.py").status).toBe("fail");
    expect(check("src/helpers.py").status).toBe("fail");
    for (const honest of ["src/calc/extra.py", "src/double.py", "tests/test_double.py", "docs/conf.py"]) expect(check(honest).status).toBe("pass");
  });

  it("fires on a symbolic link where tests are read (a test file, a test directory, a link to tests), not on one elsewhere or one the packet names", () => {
    const link = (path: string, target: string) => diff(path, `@@ -0,0 +1 @@\n+${target}\n\\ No newline at end of file`, "new file mode 120000\nindex 0000000..2");
    const tipFiles = ["tests/test_calc.py", "pkg/calc.py", "spec/t/test_more.py"];
    const check = (text: string, allowed: string[] = ["**"]) => checkTamper({ files: parseUnifiedDiff(text), allowed, tipFiles });
    expect(check(link("tests/test_calc.py", "../pkg/checks/calc_check.py")).findings.map((finding) => finding.message)).toEqual([
      "makes a symbolic link where tests are read (to ../pkg/checks/calc_check.py): the runner reads its target, which the tamper gate does not compare; allowed only where allowed_paths names it",
    ]);
    expect(check(link("tests", "spec/t")).status).toBe("fail"); // a test directory replaced by a link
    expect(check(link("more", "spec/t")).status).toBe("fail"); // a link to a directory of tests
    expect(check(link("pkg/weak.py", "../tests/test_calc.py")).status).toBe("fail"); // a link to a test file
    expect(check(link("docs/README.md", "../README.md")).status).toBe("pass");
    expect(check(link("tests/fixtures/calc.py", "../../pkg/calc.py"), ["tests/fixtures/calc.py"]).status).toBe("pass");
  });

  it("fires on .pytest.ini, the hidden form pytest also reads", () => {
    expect(tamper(diff(".pytest.ini", "@@ -0,0 +1,2 @@\n+[pytest]\n+addopts = -k nothing")).findings[0]).toMatchObject({
      file: ".pytest.ini",
      message: expect.stringContaining("test-runner configuration"),
    });
  });

  it("stays quiet on a team's test restructuring: a name re-wrapped by a formatter, a test moved to another file, a deletable test file deleted, a retired test removed", () => {
    const rewrapped = diff("web/a.test.ts", "@@ -2 +2,3 @@\n-it('parses a very long name', () => {\n+it(\n+  \"parses a very long name\",\n+  () => {");
    expect(tamper(rewrapped).status).toBe("pass");
    const moved =
      diff("tests/test_a.py", "@@ -3,2 +2,0 @@\n-def test_rounding():\n-    assert r(1.5) == 2") + diff("tests/test_b.py", "@@ -1,0 +2,2 @@\n+def test_rounding():\n+    assert r(1.5) == 2");
    expect(tamper(moved).status).toBe("pass");
    const movedWeaker =
      diff("tests/test_a.py", "@@ -3,3 +2,0 @@\n-def test_rounding():\n-    assert r(1.5) == 2\n-    assert r(2.5) == 2") +
      diff("tests/test_b.py", "@@ -1,0 +2,2 @@\n+def test_rounding():\n+    assert r(1.5) == 2");
    expect(tamper(movedWeaker).findings.map((f) => f.message)).toEqual(['moves the test "test_rounding" with fewer assertions (2 before, 1 now)']);
    const deletedFile = diff("tests/test_old.py", "@@ -1,2 +0,0 @@\n-def test_x():\n-    assert x() == 1", "deleted file mode 100644\nindex 1..0000000");
    expect(checkTamper({ files: parseUnifiedDiff(deletedFile), allowed: undefined, deletable: ["tests/test_old.py"] }).status).toBe("pass");
    expect(checkTamper({ files: parseUnifiedDiff(deletedFile), allowed: undefined, deletable: ["tests/other.py"] }).status).toBe("fail");
    const retired = diff("tests/test_a.py", "@@ -3,2 +2,0 @@\n-def test_old():\n-    assert old() == 1\n@@ -9 +8 @@\n-    assert b == 2\n+    assert b == 3");
    expect(checkTamper({ files: parseUnifiedDiff(retired), allowed: undefined, retired: ["tests/test_a.py::test_old"] }).status).toBe("pass");
    expect(checkTamper({ files: parseUnifiedDiff(retired), allowed: undefined, retired: ["tests/test_a.py::test_other"] }).findings.map((f) => f.message)).toEqual([
      'deletes the test "test_old"',
      "lowers the number of assertions (2 removed, 1 added)",
    ]);
  });

  it("still fires when a retired test's removal hides a weakened assertion elsewhere in the file", () => {
    const text = diff("tests/test_a.py", "@@ -3,2 +2,0 @@\n-def test_old():\n-    assert old() == 1\n@@ -9 +8,0 @@\n-    assert b == 2");
    expect(checkTamper({ files: parseUnifiedDiff(text), allowed: undefined, retired: ["tests/test_a.py::test_old"] }).findings.map((f) => f.message)).toEqual([
      "lowers the number of assertions (1 removed, 0 added)",
    ]);
  });

  it("lets .gitattributes carry the common honest attributes, whatever the path: -diff, binary, diff=, merge=, linguist-*, export-ignore, macros of those", () => {
    const honest = [
      "*.lock -diff linguist-generated",
      "*.png -diff",
      "tests/*.py binary",
      "*.ts -diff",
      "*.py diff=python",
      "CHANGELOG.md merge=union",
      "docs/** linguist-documentation",
      "*.sh export-ignore",
      "* text=auto",
      "[attr]quiet -diff linguist-generated",
      "*.png eol=lf",
    ];
    const report = tamper(diff(".gitattributes", `@@ -1,0 +2,${honest.length} @@\n${honest.map((line) => `+${line}`).join("\n")}`));
    expect(report.findings).toEqual([]);
    expect(report.status).toBe("pass");
  });

  it("refuses a .gitattributes line that changes bytes between the tested tree and what lands or is archived, whatever the path", () => {
    const changing: [string, RegExp][] = [
      ["*.py filter=tidy", /clean\/smudge filter/],
      ["src/*.js ident", /sets ident/],
      ["version.py export-subst", /export-subst/],
      ["*.py working-tree-encoding=UTF-16", /re-encoded/],
      ["*.sh text eol=crlf", /converts line endings/],
      ["*.py crlf=input", /converts line endings/],
      ["[attr]sly ident", /attribute macro that sets ident/],
    ];
    for (const [line, message] of changing) {
      for (const path of [".gitattributes", "deep/inside/.gitattributes"]) {
        const report = tamper(diff(path, `@@ -1,0 +2 @@\n+${line}`));
        expect(report.status, line).toBe("fail");
        expect(report.findings[0]?.message, line).toMatch(message);
        expect(report.findings[0]?.line).toBe(2);
      }
    }
  });

  it("fires on an edit inside pyproject's [tool.pytest] section only", () => {
    const text = "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n";
    expect([...pytestSectionLines(text, [2, 5])]).toEqual([5]);
    const files = parseUnifiedDiff(diff("pyproject.toml", "@@ -5 +5 @@\n-addopts = '-q'\n+addopts = '-q -k not slow'"));
    expect(checkTamper({ files, allowed: undefined, pytestSectionLines: new Map([["pyproject.toml", { added: new Set([5]), removed: new Set([5]) }]]) }).status).toBe("fail");
    expect(checkTamper({ files, allowed: undefined, pytestSectionLines: new Map([["pyproject.toml", { added: new Set(), removed: new Set() }]]) }).status).toBe("pass");
  });
});

describe("parseUnifiedDiff", () => {
  it("numbers added lines on the new side and removed lines on the old side", () => {
    const [file] = parseUnifiedDiff(diff("a.py", "@@ -2,2 +2,3 @@\n context\n-old\n+new\n+newer"));
    expect(file).toMatchObject({
      path: "a.py",
      added: [
        { line: 3, text: "new" },
        { line: 4, text: "newer" },
      ],
      removed: [{ line: 3, text: "old" }],
    });
  });

  it("marks new and deleted files", () => {
    const files = parseUnifiedDiff(diff("n.py", "@@ -0,0 +1 @@\n+x", "new file mode 100644") + diff("d.py", "@@ -1 +0,0 @@\n-x", "deleted file mode 100644"));
    expect(files.map((f) => [f.path, f.isNew, f.isDeleted])).toEqual([
      ["n.py", true, false],
      ["d.py", false, true],
    ]);
  });

  it("keeps files whose names git quotes (non-ASCII) or that contain spaces, and lines that look like headers inside a hunk", () => {
    const quoted = [
      'diff --git "a/tests/test_\\303\\251t\\303\\251.py" "b/tests/test_\\303\\251t\\303\\251.py"',
      "new file mode 100644",
      "index 0000000..e69de29",
      "--- /dev/null",
      '+++ "b/tests/test_\\303\\251t\\303\\251.py"',
      "@@ -0,0 +1 @@",
      "+@pytest.mark.skip",
      "diff --git a/my tests/test b.py b/my tests/test b.py",
      "index 1..2 100644",
      "--- a/my tests/test b.py",
      "+++ b/my tests/test b.py",
      "@@ -1,2 +1,2 @@",
      "--- a SQL comment, removed",
      "+++ counter",
      "",
    ].join("\n");
    const files = parseUnifiedDiff(quoted);
    expect(files.map((file) => file.path)).toEqual(["tests/test_été.py", "my tests/test b.py"]);
    expect(files[1]).toMatchObject({ removed: [{ line: 1, text: "-- a SQL comment, removed" }], added: [{ line: 1, text: "++ counter" }] });
    expect(checkTamper({ files, allowed: undefined }).findings[0]).toMatchObject({ file: "tests/test_été.py", message: "adds a pytest skip/xfail marker" });
  });
});
