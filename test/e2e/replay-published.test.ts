import { afterEach, describe, expect, it } from "vitest";
import { pytestAvailable } from "../helpers/python-queue.js";
import { type Replay, replayPublished } from "../helpers/replay.js";

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

describe("replays of published history", { timeout: 600_000 }, () => {
  it.skipIf(!python)("Python + pytest: gyp-next inside node-gyp, 10.0.1 → 11.4.2: four honest steps merge first time; the reformatting-only step is caught", async (context) => {
    const result = await replayPublished({
      name: "node-gyp",
      // 10.3.x and 11.0.0 change none of gyp's files; 11.2.0 only reformats tests (11.1.0 → 11.3.0 is one step).
      versions: ["10.0.1", "10.1.0", "10.2.0", "11.1.0", "11.3.0", "11.4.2"],
      root: "gyp",
      config: `[surfaces.py]\ndir = "."\n  [[surfaces.py.gates]]\n  name = "pytest"\n  run = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} pylib"\n  tests = true\n[planning]\nmutants = 0\n`,
      isTest: (path) => /^pylib\/.*_test\.py$/.test(path),
    });
    if (!result.ok) {
      console.warn(`skipping the gyp-next replay: ${result.reason}`);
      return context.skip();
    }
    const { replay } = result;
    replays.push(replay);
    const out = `${replay.run.stdout}${replay.run.stderr}`;
    const lines = replay.steps.map((step) => `${step.id} ${step.label} [${step.planted} planted, ${step.written} written] ${step.state} ${step.reason ?? ""}`);
    expect(
      replay.steps.slice(0, 4).map((step) => [step.id, step.state, step.attempts]),
      `${lines.join("\n")}\n${out}`,
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
});
