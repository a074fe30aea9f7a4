import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parseJunit } from "../../src/gates/junit.js";

/** The loop tests' one-process runner must report what node --test would: a guard test on it is only as honest as it is. */
const RUNNER = fileURLToPath(new URL("../helpers/junit-runner.mjs", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "factory-junit-runner-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function runIn(dir: string): { code: number | null; outcomes: Record<string, string> } {
  const run = spawnSync(process.execPath, ["--test-reporter=junit", "--test-reporter-destination=junit.xml", RUNNER, "test/"], { cwd: dir, encoding: "utf8" });
  const parsed = parseJunit(readFileSync(join(dir, "junit.xml"), "utf8"));
  if (!parsed.ok) throw new Error(parsed.detail);
  return { code: run.status, outcomes: Object.fromEntries(parsed.results.map((result) => [result.id, result.outcome])) };
}

const TEST = (name: string, body: string): string => `import assert from "node:assert/strict";\nimport test from "node:test";\ntest("${name}", () => {\n  ${body}\n});\n`;

describe("the loop tests' junit runner", () => {
  it("reports every case of every file under the path, and exits 0 when all pass", () => {
    const { code, outcomes } = runIn(project({ "test/a.test.js": TEST("a", "assert.ok(true);"), "test/deep/b.test.js": TEST("b", "assert.ok(true);") }));
    expect(outcomes).toEqual({ "test::a": "passed", "test::b": "passed" });
    expect(code).toBe(0);
  });

  it("a failing case fails, a file that cannot load is a failing case named by its path, and the run exits 1", () => {
    const { code, outcomes } = runIn(
      project({ "test/a.test.js": TEST("a", "assert.equal(1, 2);"), "test/b.test.js": 'import { x } from "../src/missing.js";\n', "test/c.test.js": TEST("c", "assert.ok(true);") }),
    );
    expect(outcomes).toEqual({ "test::a": "failed", "test::test/b.test.js": "failed", "test::c": "passed" });
    expect(code).toBe(1);
  });
});
