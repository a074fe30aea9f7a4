import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { init, isSrcLayout } from "../../src/commands/init.js";
import { parseConfig } from "../../src/config/parse.js";
import { bufferOutput } from "../../src/log/output.js";
import { runCli } from "../helpers/cli.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { publishedTools } from "../helpers/published.js";
import { pytestAvailable } from "../helpers/python-queue.js";

let repo: TestRepo;
const onCleanup: (() => void)[] = [];
afterEach(() => {
  repo?.cleanup();
  for (const clean of onCleanup.splice(0)) clean();
});

describe("factory init", () => {
  it("detects python and node surfaces and writes a config that lints", async () => {
    repo = makeRepo();
    repo.write("api/pyproject.toml", "[project]\nname = 'api'\n");
    repo.write("web/package.json", JSON.stringify({ scripts: { lint: "eslint .", test: "vitest run" }, devDependencies: { vitest: "4" } }));
    repo.write("web/package-lock.json", "{}");
    const output = bufferOutput();
    expect(await init({ cwd: repo.dir, output })).toBe(0);
    const text = repo.read(".factory/config.toml");
    const parsed = parseConfig(text);
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
    if (!parsed.ok) return;
    expect(parsed.config.surfaces.map((s) => [s.name, s.dir, s.gates.map((g) => g.name)])).toEqual([
      ["api", "api", ["pytest"]], // no ruff gates: the project does not use ruff
      ["web", "web", ["lint", "test"]],
    ]);
    expect(parsed.config.surfaces[0]?.gates[0]).toMatchObject({ tests: true, run: expect.stringContaining("--junitxml={junit}") });
    expect(parsed.config.surfaces[1]?.install).toBe("npm ci");
    expect(parsed.config.targetBranch).toBe("main");
    expect(text).toContain("# "); // commented for a person
    // Commented templates for the other agent kinds and notify keys, which parse once uncommented.
    for (const line of ['# kind = "codex"', '# kind = "gemini"', '# kind = "command"', "# webhook = ", "# desktop = true"]) expect(text).toContain(line);
    const uncommented = parseConfig(text.replace(/^# (\[agents\.|kind|bin|run|prices|webhook|desktop)/gm, "$1"));
    expect(uncommented.ok ? [] : uncommented.problems).toEqual([]);
    expect(output.stdout.join("\n")).toContain("Next: factory doctor");
  });

  it("fits the project: ruff only where it is configured or a dependency, the install its lock file names, node:test with explicit paths", async () => {
    repo = makeRepo();
    repo.write("svc/pyproject.toml", "[project]\nname = 'svc'\ndependencies = []\n\n[tool.ruff]\nline-length = 100\n");
    repo.write("svc/uv.lock", "");
    repo.write("lib/setup.cfg", "[metadata]\nname = lib\n");
    repo.write("lib/requirements-dev.txt", "pytest\nruff==0.8.0\n");
    repo.write("ui/package.json", JSON.stringify({ scripts: { lint: "eslint .", test: "node --test spec/" } }));
    repo.write("ui/pnpm-lock.yaml", "lockfileVersion: 9\n");
    repo.write("cli/package.json", JSON.stringify({ scripts: { test: "node --test" } }));
    repo.write("app/package.json", JSON.stringify({ scripts: { test: "jest" }, devDependencies: { jest: "30", "jest-junit": "16" } }));
    repo.write("old/package.json", JSON.stringify({ scripts: { test: "jest" }, devDependencies: { jest: "30" } }));
    repo.write("mo/package.json", JSON.stringify({ scripts: { test: "mocha" }, devDependencies: { mocha: "12" } }));
    repo.write("cli/tests/a.test.js", "");
    await init({ cwd: repo.dir, output: bufferOutput() });
    const parsed = parseConfig(repo.read(".factory/config.toml"));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const surface = (name: string) => parsed.config.surfaces.find((candidate) => candidate.name === name);
    expect(surface("svc")?.gates.map((gate) => gate.name)).toEqual(["ruff-format", "ruff", "pytest"]);
    expect(surface("svc")?.install).toBe("uv sync");
    expect(surface("lib")?.gates.map((gate) => gate.name)).toEqual(["ruff-format", "ruff", "pytest"]);
    expect(surface("ui")?.install).toBe("pnpm install --frozen-lockfile");
    expect(surface("ui")?.gates.map((gate) => gate.run)).toEqual(["pnpm run lint", expect.stringMatching(/^node --test .* \{tests\|\$\(find spec -type f -name '\*\.\*js' \| sort\)\}$/)]);
    expect(surface("cli")?.gates.find((gate) => gate.name === "test")?.run).toMatch(/\{tests\|\$\(find tests -type f -name '\*\.\*js' \| sort\)\}$/);
    expect(surface("app")?.gates.find((gate) => gate.name === "test")).toMatchObject({
      tests: true,
      run: "JEST_JUNIT_OUTPUT_FILE={junit} JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true npx jest --ci --reporters=default --reporters=jest-junit --runTestsByPath -- {tests}",
    });
    expect(surface("old")?.gates.find((gate) => gate.name === "test")).toMatchObject({ tests: false, run: "npm test" });
    expect(surface("mo")?.gates.find((gate) => gate.name === "test")).toMatchObject({ tests: true, run: "npx mocha --parallel --reporter xunit --reporter-option output={junit} {tests}" });
    expect(repo.read(".factory/config.toml")).toContain("jest writes no JUnit XML by itself: add jest-junit to devDependencies");
  });

  it.skipIf(!pytestAvailable("init's src-layout test"))(
    "on a src layout (setuptools package-dir, nothing installs the project) writes the import path: doctor then proves its pytest gate armed",
    async () => {
      repo = makeRepo();
      repo.write("pyproject.toml", '[project]\nname = "calc"\nversion = "1.0"\n\n[tool.setuptools]\npackage-dir = {"" = "src"}\n');
      repo.write("src/calc/__init__.py", "def add(a, b):\n    return a + b\n");
      repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n");
      repo.commit("a src-layout project");
      expect(await init({ cwd: repo.dir, output: bufferOutput() })).toBe(0);
      const text = repo.read(".factory/config.toml");
      expect(text).toContain('run = "PYTHONPATH=src python3 -m pytest -q --ignore=packets --junitxml={junit} {tests}"');
      expect(text).toContain("# src layout: the package is imported from src/");
      // A command agent in place of Claude Code (not installed here): doctor checks its program only.
      repo.write(".factory/config.toml", text.replace('kind = "claude"\nbin = "claude"', 'kind = "command"\nrun = "true"').replace("mutants = 20", "mutants = 0"));
      repo.commit("factory config");
      const doctor = runCli(["doctor", "--no-models"], repo.dir, {}, 150_000);
      expect(doctor.stdout).toMatch(/armed {6}surface "[\w-]+": tests gate "pytest": fails with a failing test added \(tests\/test_factory_doctor_probe\.py\), passes the untouched tree/);
      expect(doctor.code, `${doctor.stdout}${doctor.stderr}`).toBe(0);
    },
    180_000,
  );

  /**
   * A node project of `runner` (installed from the registry at test time: the project does not depend on it) with
   * `files`, through `init` and `doctor`: the config init wrote, and what doctor printed. The install copies in the
   * cached runner, from a copy outside HOME (the sandbox shows no home directory); a command agent stands in for
   * Claude Code (not installed here).
   */
  async function initAndDoctor(modules: string, runner: string, files: Record<string, string>): Promise<{ text: string; doctor: ReturnType<typeof runCli> }> {
    repo = makeRepo();
    const [name = "", version = ""] = runner.split("@");
    repo.write("package.json", JSON.stringify({ type: "module", scripts: { test: name }, devDependencies: { [name]: version } }));
    repo.write("src/add.js", "export const add = (a, b) => a + b;\n");
    for (const [path, text] of Object.entries(files)) repo.write(path, text);
    repo.write(".gitignore", "node_modules\n");
    repo.commit(`a ${name} project`);
    expect(await init({ cwd: repo.dir, output: bufferOutput() })).toBe(0);
    const text = repo.read(".factory/config.toml");
    const copy = mkdtempSync(join(tmpdir(), `factory-${name}-`));
    onCleanup.push(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(modules, copy, { recursive: true, verbatimSymlinks: true });
    const config = text
      .replace('install = "npm install"', `install = "cp -R ${copy} node_modules"`)
      .replace('kind = "claude"\nbin = "claude"', 'kind = "command"\nrun = "true"')
      .replace("mutants = 20", "mutants = 0");
    repo.write(".factory/config.toml", config);
    repo.commit("factory config");
    return { text, doctor: runCli(["doctor", "--no-models"], repo.dir, {}, 150_000) };
  }

  const mocha = publishedTools(["mocha@12.0.3"]);
  if (!mocha.ok) console.warn(`skipping init and doctor on a mocha project: ${mocha.reason}`);
  it.skipIf(!mocha.ok)(
    "on a mocha project writes the xunit gate in parallel mode, and doctor proves it armed",
    async () => {
      const { text, doctor } = await initAndDoctor((mocha as { modules: string }).modules, "mocha@12.0.3", {
        "test/add.test.js": 'import assert from "node:assert/strict";\nimport { add } from "../src/add.js";\n\ndescribe("add", () => {\n  it("adds", () => assert.equal(add(2, 2), 4));\n});\n',
      });
      expect(text).toContain(`run = "npx mocha --parallel --ignore 'packets/**' --reporter xunit --reporter-option output={junit} {tests}"`);
      expect(doctor.stdout).toMatch(/armed {6}surface "[\w-]+": tests gate "test": fails with a failing test added \(test\/factory-doctor-probe\.test\.js\), passes the untouched tree/);
      expect(doctor.stdout).toMatch(/armed {6}surface "[\w-]+": tests gate "test": fails with a file of passing tests removed \(test\/add\.test\.js\), passes the untouched tree/);
      expect(doctor.code, `${doctor.stdout}${doctor.stderr}`).toBe(0);
    },
    180_000,
  );

  const ava = publishedTools(["ava@6.4.1"]);
  if (!ava.ok) console.warn(`skipping init and doctor on an ava project: ${ava.reason}`);
  it.skipIf(!ava.ok)(
    "on an ava project (one test.js at the root, as ava's defaults have it) writes the TAP gate, and doctor proves it armed",
    async () => {
      const { text, doctor } = await initAndDoctor((ava as { modules: string }).modules, "ava@6.4.1", {
        "test.js": 'import test from "ava";\nimport { add } from "./src/add.js";\n\ntest("adds", (t) => {\n  t.is(add(2, 2), 4);\n});\n',
      });
      expect(text).toContain('run = "npx ava --tap > {tap}"');
      expect(doctor.stdout).toMatch(/armed {6}surface "[\w-]+": tests gate "test": fails with a failing test added \(test-factory-doctor-probe\.js\), passes the untouched tree/);
      expect(doctor.stdout).toMatch(/armed {6}surface "[\w-]+": tests gate "test": fails with a file of passing tests removed \(test\.js\), passes the untouched tree/);
      expect(doctor.stdout).toMatch(/armed {6}guard tamper: fails on a skip marker added to test\.js/);
      expect(doctor.code, `${doctor.stdout}${doctor.stderr}`).toBe(0);
    },
    180_000,
  );

  it("recognises the src layouts of hatch, poetry and setuptools' find, and leaves the path alone where uv or poetry installs the project or pytest sets it", async () => {
    expect(isSrcLayout('[tool.hatch.build.targets.wheel]\npackages = ["src/calc"]\n', [])).toBe(true);
    expect(isSrcLayout('[tool.poetry]\npackages = [{ include = "calc", from = "src" }]\n', [])).toBe(true);
    expect(isSrcLayout('[tool.setuptools.packages.find]\nwhere = ["src"]\n', [])).toBe(true);
    expect(isSrcLayout('[project]\nname = "flat"\n', [])).toBe(false);
    repo = makeRepo();
    repo.write("pyproject.toml", '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n');
    repo.write("src/calc/__init__.py", "");
    repo.write("svc/pyproject.toml", '[project]\nname = "svc"\n');
    repo.write("svc/uv.lock", "");
    repo.write("svc/src/svc/__init__.py", "");
    expect(await init({ cwd: repo.dir, output: bufferOutput() })).toBe(0);
    expect(repo.read(".factory/config.toml")).not.toContain("PYTHONPATH=src");
  });

  it("takes the checked-out branch as the target branch", async () => {
    repo = makeRepo();
    repo.git("checkout", "-q", "-b", "trunk");
    await init({ cwd: repo.dir, output: bufferOutput() });
    const parsed = parseConfig(repo.read(".factory/config.toml"));
    expect(parsed.ok && parsed.config.targetBranch).toBe("trunk");
  });

  it("adds the detected toolchains' cache directories to .gitignore: ruff's only where the project uses ruff", async () => {
    repo = makeRepo();
    repo.write("pyproject.toml", "[project]\nname = 'x'\n");
    repo.write("web/package.json", "{}");
    await init({ cwd: repo.dir, output: bufferOutput() });
    const rules = repo.read(".gitignore").split("\n");
    for (const rule of ["__pycache__/", ".pytest_cache/", "node_modules/"]) expect(rules).toContain(rule);
    expect(rules).not.toContain(".ruff_cache/");
    const withRuff = makeRepo();
    try {
      withRuff.write("pyproject.toml", "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 100\n");
      await init({ cwd: withRuff.dir, output: bufferOutput() });
      expect(withRuff.read(".gitignore").split("\n")).toContain(".ruff_cache/");
    } finally {
      withRuff.cleanup();
    }
  });

  it("adds the state dirs to .gitignore without touching other rules, once", async () => {
    repo = makeRepo();
    repo.write(".gitignore", "node_modules\n*.log\n.factory/runs/");
    await init({ cwd: repo.dir, output: bufferOutput() });
    await init({ cwd: repo.dir, output: bufferOutput() });
    const ignore = repo.read(".gitignore");
    expect(ignore.startsWith("node_modules\n*.log\n.factory/runs/\n")).toBe(true);
    expect(ignore.match(/\.factory\/state\//g)).toHaveLength(1);
    expect(ignore.match(/\.factory\/runs\//g)).toHaveLength(1);
    expect(ignore).toContain(".factory/worktrees/");
    repo.write(".factory/state/ledger.jsonl", "{}\n");
    expect(repo.git("status", "--porcelain", "--untracked-files=all")).not.toContain(".factory/state");
  });

  it("never clobbers an edited config", async () => {
    repo = makeRepo();
    await init({ cwd: repo.dir, output: bufferOutput() });
    repo.write(".factory/config.toml", '# mine\ntarget_branch = "main"\n');
    const output = bufferOutput();
    expect(await init({ cwd: repo.dir, output })).toBe(0);
    expect(repo.read(".factory/config.toml")).toBe('# mine\ntarget_branch = "main"\n');
    expect(output.text()).toContain("exists; left as it is");
  });

  it("refuses outside a git repository with exit code 2", async () => {
    repo = makeRepo();
    const output = bufferOutput();
    expect(await init({ cwd: "/", output })).toBe(2);
    expect(output.stderr.join("\n")).toContain("not inside a git repository");
  });
});
