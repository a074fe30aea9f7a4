import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { pytestAvailable } from "../helpers/python-queue.js";
import { type Replay, type ReplayResult, replayPublished } from "../helpers/replay.js";

/**
 * Real upstream work nobody here wrote, replayed through the factory: consecutive published versions of
 * npm packages that carry their tests (downloaded at test time into a cache, never committed), each step a
 * packet whose planted tests are the version's changed test files exactly as published and whose scripted
 * implementer applies exactly its other changes. Every honest step must merge first time and leave the
 * replayed tree equal to the version's; a step whose planted tests already pass is a true catch.
 */
const replays: Replay[] = [];
afterEach(() => {
  for (const replay of replays.splice(0)) replay.cleanup();
});

const python = pytestAvailable("the replay of gyp-next's published history");

/**
 * A replay that ran, kept for removal after the test, with its output and a line per step for a failing
 * expectation; or the test skipped, saying why (no registry).
 */
function ready(context: TestContext, result: ReplayResult): { replay: Replay; out: string; explain: string } {
  if (!result.ok) {
    console.warn(`skipping a replay of published history: ${result.reason}`);
    return context.skip();
  }
  const { replay } = result;
  replays.push(replay);
  const out = `${replay.run.stdout}${replay.run.stderr}`;
  const lines = replay.steps.map((step) => `${step.id} ${step.label} [${step.planted} planted, ${step.written} written] ${step.state} ${step.reason ?? ""}`);
  return { replay, out, explain: `${lines.join("\n")}\n${out}` };
}

/** The project's own vitest (4), which zod's published tests import. */
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));

/**
 * zod's suite in the replay: every test file its versions 4.6.3 to 4.6.5 change (its whole suite takes 40 s a
 * run here, and each step runs it). to-json-schema's needs a dev dependency the published manifest does not
 * name: the surface's install brings it.
 */
const ZOD_SUITE = [
  ...["assignability", "cyclic-data", "firstparty", "instance-footprint", "instanceof", "number", "properties", "string", "to-json-schema"].map((name) => `src/v4/classic/tests/${name}.test.ts`),
  ...["compile-differential", "compile", "url-no-canparse"].map((name) => `src/v4/core/tests/${name}.test.ts`),
  ...["index", "string"].map((name) => `src/v4/mini/tests/${name}.test.ts`),
];

/**
 * fast-json-stringify's suite in the replay: every test file its versions 7.3.4 to 7.3.11 change (its whole
 * suite, 68 files, takes 30 s a run here). Its standalone-mode tests load the code they generate through the
 * package's own name, which only its dev dependencies' self-link ("fast-json-stringify": ".") provides.
 * The gate names those of them a version has (string-escape's is new in 7.3.5).
 */
const FJS_SUITE = ["additionalProperties", "anyof", "compile-validators", "date", "if-then-else", "object-mechanism-native", "oneof", "ref", "schema-depth", "standalone-mode", "string-escape"].map(
  (name) => `test/${name}.test.js`,
);

/**
 * The replay's vitest config for zod: the package's self-imports ("zod/v4") resolve to its own source, as its
 * build's exports map names them (the "@zod/source" condition).
 */
const ZOD_VITEST_CONFIG = `import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const manifest = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const alias = Object.entries(manifest.zshy.exports)
  .filter(([key, path]) => key !== "./package.json" && !key.includes("*") && path.endsWith(".ts"))
  .map(([key, path]) => ({ find: new RegExp("^" + ("zod" + key.slice(1)).replace(/[/.]/g, "\\\\$&") + "$"), replacement: fileURLToPath(new URL(path, import.meta.url)) }));

export default {
  resolve: { alias, conditions: ["@zod/source"] },
  test: { include: ${JSON.stringify(ZOD_SUITE)}, pool: "threads" },
};
`;

// A ceiling, not a timed assertion: the node --test replay takes about 220 s on a quiet machine and passed 600 s at load ~10.
describe("replays of published history", { timeout: 1_200_000 }, () => {
  it.skipIf(!python)("Python + pytest: gyp-next inside node-gyp, 10.0.1 → 11.4.2: four honest steps merge first time; the reformatting-only step is caught", async (context) => {
    const result = await replayPublished({
      name: "node-gyp",
      // 10.3.x and 11.0.0 change none of gyp's files; 11.2.0 only reformats tests (11.1.0 → 11.3.0 is one step).
      versions: ["10.0.1", "10.1.0", "10.2.0", "11.1.0", "11.3.0", "11.4.2"],
      root: "gyp",
      config: `[surfaces.py]\ndir = "."\n  [[surfaces.py.gates]]\n  name = "pytest"\n  run = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} pylib"\n  tests = true\n[planning]\nmutants = 0\n`,
      isTest: (path) => /^pylib\/.*_test\.py$/.test(path),
    });
    const { replay, out, explain } = ready(context, result);
    expect(
      replay.steps.slice(0, 4).map((step) => [step.id, step.state, step.attempts]),
      explain,
    ).toEqual([
      ["U01", "merged", 1],
      ["U02", "merged", 1],
      ["U03", "merged", 1],
      ["U04", "merged", 1],
    ]);
    // Two of them plant the version's changed tests (10.2.0 adds test_GetCrossCompilerPredefines; 11.3.0 renames it).
    expect(replay.steps[1]?.planted).toBeGreaterThan(0);
    expect(replay.steps[3]?.planted).toBeGreaterThan(0);
    // Their macOS-only cases are skipped here before and after the work: said, never blamed.
    expect(out).toContain("planted case(s) skipped here before and after the work, not checked on this machine (This test only runs on macOS)");
    expect(replay.differsFrom("11.3.0")).toEqual([]);
    // 11.4.2 only reformats its tests: none fails before the work, so they cannot tell it done — a true catch, with the counts.
    const last = replay.steps[4];
    expect(last?.state).toBe("blocked");
    expect(last?.reason).toMatch(/^planted tests cannot tell right from wrong: pylib\/gyp\/MSVSSettings_test\.py: \d+ cases, 0 new; .* none fails before the work/);
    expect(replay.run.code).toBe(1);
  });

  it("TypeScript + vitest: zod 4.6.2 → 4.6.5: two honest steps merge first time; the step whose only new test checks types is caught", async (context) => {
    const result = await replayPublished({
      name: "zod",
      versions: ["4.6.2", "4.6.3", "4.6.4", "4.6.5"],
      config: `[surfaces.ts]\ndir = "."\ninstall = "npm install --no-save --no-package-lock --ignore-scripts --no-audit --no-fund @seriousme/openapi-schema-validator@2.11.0"\n  [[surfaces.ts.gates]]\n  name = "vitest"\n  run = "node ${VITEST} run --reporter=dot --reporter=junit --outputFile.junit={junit} {tests}"\n  tests = true\n[planning]\nmutants = 0\n`,
      isTest: (path) => ZOD_SUITE.includes(path),
      extraFiles: { "vitest.config.mjs": ZOD_VITEST_CONFIG },
    });
    const { replay, explain } = ready(context, result);
    expect(
      replay.steps.slice(0, 2).map((step) => [step.id, step.state, step.attempts]),
      explain,
    ).toEqual([
      ["U01", "merged", 1],
      ["U02", "merged", 1],
    ]);
    // Each plants the version's changed tests exactly as published (4.6.4's to-json-schema drops four cases: the planted file is the version's own).
    expect(replay.steps.map((step) => step.planted)).toEqual([4, 10, 1]);
    expect(replay.differsFrom("4.6.4")).toEqual([]);
    // 4.6.5's one new case in properties.test.ts asserts types only (expectTypeOf, @ts-expect-error): vitest runs it green before the work.
    const last = replay.steps[2];
    expect(last?.state).toBe("blocked");
    expect(last?.reason).toBe(
      "planted tests cannot tell right from wrong: src/v4/classic/tests/properties.test.ts: 11 cases, 1 new, none fails before the work: plant a test that fails without the change",
    );
    expect(replay.run.code).toBe(1);
  });

  it("plain JavaScript + node --test: fast-json-stringify 7.3.3 → 7.3.11, its dev dependencies installed by the factory: five honest steps merge first time", async (context) => {
    const result = await replayPublished({
      name: "fast-json-stringify",
      versions: ["7.3.3", "7.3.4", "7.3.5", "7.3.6", "7.3.10", "7.3.11"],
      config: `[surfaces.js]\ndir = "."\ninstall = "npm install --prefer-offline --no-package-lock --no-audit --no-fund --ignore-scripts"\n  [[surfaces.js.gates]]\n  name = "node-test"\n  run = "node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination={junit} {tests|$(ls ${FJS_SUITE.join(" ")} 2>/dev/null)}"\n  tests = true\n[planning]\nmutants = 0\n`,
      isTest: (path) => FJS_SUITE.includes(path),
    });
    const { replay, explain } = ready(context, result);
    expect(
      replay.steps.map((step) => [step.id, step.state, step.attempts]),
      explain,
    ).toEqual([
      ["U01", "merged", 1],
      ["U02", "merged", 1],
      ["U03", "merged", 1],
      ["U04", "merged", 1],
      ["U05", "merged", 1],
    ]);
    expect(replay.steps.every((step) => step.planted > 0)).toBe(true);
    expect(replay.differsFrom("7.3.11")).toEqual([]);
    expect(replay.run.code).toBe(0);
  });
});
