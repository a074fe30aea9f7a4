import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { init } from "../../src/commands/init.js";
import { vitestHasExclude } from "../../src/config/presets.js";
import { bufferOutput } from "../../src/log/output.js";
import { hasDotDirectory, SHARED_TMP } from "../../src/loop/context.js";
import { runCliAsync } from "../helpers/cli.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { useLoopRepos } from "../helpers/loop-repo.js";
import { publishedTools } from "../helpers/published.js";

/**
 * Issue 40 §4: test runners that behave differently in the factory's worktrees, with the real runners
 * (installed at test time into the test cache, never committed). vitest 0.33 excludes every path through a
 * `.cache` directory, matched against absolute paths, so in a worktree under `~/.cache` it found no test;
 * and it refuses `--exclude`, an option vitest 1.0 added, which `factory init` wrote for every vitest.
 */
const OLD_VITEST = publishedTools(["vitest@0.33.0"]);
if (!OLD_VITEST.ok) console.warn(`skipping the vitest 0.x tests: ${OLD_VITEST.reason}`);
const JEST = publishedTools(["jest@30.5.2", "jest-junit@17.0.0"]);
if (!JEST.ok) console.warn(`skipping jest beside vitest 0.x: ${JEST.reason}`);
const vitestBin = OLD_VITEST.ok ? join(OLD_VITEST.modules, "vitest", "vitest.mjs") : "";
const jestBin = JEST.ok ? join(JEST.modules, "jest", "bin", "jest.js") : "";

const setUp = useLoopRepos(afterEach);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A planted test both runners take: CommonJS, their globals. */
const PLANTED = 'const { double } = require("../src/double.js");\n\ntest("doubles", () => {\n  expect(double(21)).toBe(42);\n});\n';
const DOUBLE = "exports.double = (n) => n * 2;\n";
const EXISTING = 'const { add } = require("../src/add.js");\n\ntest("adds", () => {\n  expect(add(2, 2)).toBe(4);\n});\n';

/** The gates: vitest 0.33 on the whole suite, and (where it is had) jest with its default ignores. */
function gates(): string {
  const vitest = `
  [[surfaces.app.gates]]
  name = "vitest"
  run = "node ${vitestBin} run --globals --reporter=default --reporter=junit --outputFile.junit={junit} {tests|test/}"
  tests = true
`;
  const jest = `
  [[surfaces.app.gates]]
  name = "jest"
  run = "JEST_JUNIT_OUTPUT_FILE={junit} JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true node ${jestBin} --ci --rootDir . --cacheDirectory ./.jest-cache --reporters=default --reporters=${join(JEST.ok ? JEST.modules : "", "jest-junit")} --runTestsByPath -- {tests|test/add.test.js test/double.test.js}"
  tests = true
`;
  return `${vitest}${JEST.ok ? jest : ""}`;
}

describe.skipIf(!OLD_VITEST.ok)("worktrees where a runner's default excludes cannot hide them", () => {
  it("a home whose cache is ~/.cache puts worktrees where no directory starts with a dot: vitest 0.33 (and jest) find the tests, and the packet merges", async () => {
    const target = setUp({ gates: gates(), planted: PLANTED, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE } }] } } });
    target.write("package.json", JSON.stringify({ name: "target", private: true }));
    target.write("src/add.js", "exports.add = (a, b) => a + b;\n");
    target.write("test/add.test.js", EXISTING);
    target.write("test/calc.test.js", 'test("calc is kept", () => {\n  expect(1 + 1).toBe(2);\n});\n');
    target.write(".gitignore", `${target.read(".gitignore")}node_modules/\n.jest-cache/\n`);
    target.commit("a CommonJS project tested by vitest 0.33 and jest");
    const home = mkdtempSync(join(tmpdir(), "factory-dot-cache-home-"));
    const env: Record<string, string> = { HOME: home, XDG_CACHE_HOME: "" };
    // Where the fallback puts this repository's worktrees, removed afterwards (the shared directory stays if another repository's are there).
    const shared = join(SHARED_TMP, `factory-${process.getuid?.()}`);
    cleanups.push(() => {
      rmSync(home, { recursive: true, force: true });
      for (const name of existsSync(join(shared, "worktrees")) ? readdirSync(join(shared, "worktrees")) : []) {
        if (name.startsWith(`${target.dir.split("/").pop()}-`)) rmSync(join(shared, "worktrees", name), { recursive: true, force: true });
      }
      for (const dir of [join(shared, "worktrees"), shared]) {
        try {
          rmdirSync(dir);
        } catch {
          // not empty: another repository's worktrees
        }
      }
    });
    expect(hasDotDirectory(join(home, ".cache", "factory"))).toBe(true);

    const run = await runCliAsync(["run"], target.dir, env, 300_000);
    const out = `${run.stdout}${run.stderr}`;
    expect(out).not.toContain("No test files found");
    expect(run.code, out).toBe(0);
    expect(target.subjects()[0]).toContain("[P01]");
    // Each runner ran the suite in the candidate: the planted test and the team's.
    for (const gate of JEST.ok ? ["vitest", "jest"] : ["vitest"]) {
      const report = readFileSync(join(target.dir, `.factory/runs/P01/attempt-1/reports/junit-${gate}.xml`), "utf8");
      expect(report, gate).toMatch(/name="[^"]*doubles"/);
      expect(report, gate).toMatch(/name="[^"]*adds"/);
    }
    // Nothing was put in the dotted cache; the worktrees went to the shared temporary directory, and are gone after the landing.
    expect(existsSync(join(home, ".cache", "factory", "worktrees"))).toBe(false);
    expect(existsSync(join(shared, "worktrees"))).toBe(true);
  });

  it("in a dot-directory, as before, vitest 0.33 finds no test at all (what the worktree's place avoids)", () => {
    const dir = mkdtempSync(join(tmpdir(), "factory-dot-cache-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    for (const [place, found] of [
      [join(dir, ".cache", "w"), false],
      [join(dir, "cache", "w"), true],
    ] as const) {
      mkdirSync(join(place, "test"), { recursive: true });
      writeFileSync(join(place, "test", "x.test.js"), 'test("x", () => {\n  expect(1).toBe(1);\n});\n');
      const result = spawnSync(process.execPath, [vitestBin, "run", "--globals"], { cwd: place, encoding: "utf8" });
      expect(`${result.stdout}${result.stderr}`.includes("No test files found"), `${place}: ${result.stdout}${result.stderr}`).toBe(!found);
      expect(result.status).toBe(found ? 0 : 1);
    }
  });
});

describe("factory init on a vitest before 1.0", () => {
  let repo: TestRepo | undefined;
  afterEach(() => repo?.cleanup());

  it("knows which versions have --exclude", () => {
    expect([undefined, "4", "^1.0.0", "3.2.4", "latest"].map(vitestHasExclude)).toEqual([true, true, true, true, true]);
    expect(["0.33.0", "^0.28.5", "~0.34.6", ">=0.30 <1"].map(vitestHasExclude)).toEqual([false, false, false, false]);
  });

  it.skipIf(!OLD_VITEST.ok)("writes the gate the installed vitest accepts (no --exclude, said in a comment), and that gate runs", async () => {
    repo = makeRepo();
    repo.write("package.json", JSON.stringify({ name: "old", private: true, scripts: { test: "vitest run" }, devDependencies: { vitest: "^0.33.0" } }));
    repo.write("test/x.test.js", 'import { expect, test } from "vitest";\n\ntest("x", () => {\n  expect(1).toBe(1);\n});\n');
    symlinkSync(OLD_VITEST.ok ? OLD_VITEST.modules : "", join(repo.dir, "node_modules"));
    expect(await init({ cwd: repo.dir, output: bufferOutput() })).toBe(0);
    const config = repo.read(".factory/config.toml");
    const run = /^ {2}run = "(npx vitest run[^"]*)"/m.exec(config)?.[1] ?? "";
    expect(run).not.toContain("--exclude");
    expect(config).toContain("vitest 0.33.0 has no --exclude (vitest 1.0 added it)");
    const junit = join(repo.dir, "junit.xml");
    const gate = spawnSync("sh", ["-c", run.replace("{junit}", junit).replace(" {tests}", "")], { cwd: repo.dir, encoding: "utf8" });
    expect(gate.status, `${gate.stdout}${gate.stderr}`).toBe(0);
    expect(readFileSync(junit, "utf8")).toContain('name="x"');
    // The form a current vitest takes is refused by this one: the whole gate failed.
    const refused = spawnSync("sh", ["-c", `${run.replace("{junit}", junit).replace(" {tests}", "")} --exclude 'packets/**'`], { cwd: repo.dir, encoding: "utf8" });
    expect(`${refused.stderr}`).toContain("Unknown option `--exclude`");
  });
});
