import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import { measureBaseline } from "../../src/loop/baseline.js";
import { tracer } from "../../src/process/trace.js";
import { makeRepo } from "../helpers/git-repo.js";
import { pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * What the tip's tests read is traced once per tip, with its baseline, and kept with it (issue 55 §2): the
 * verdict tree is built from it before the candidate's one full-suite run, rather than found by that run and
 * run again.
 */
const traced = tracer() !== undefined;
if (!traced) console.warn("skipping the baseline-reads test: strace is not on this machine");
const available = pytestAvailable("the baseline-reads test") && traced;
const queue = usePythonQueue(afterEach);
const runDirs: string[] = [];
afterEach(() => {
  for (const dir of runDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!available)("the baseline of a tip", () => {
  it("keeps the files its tests read, a data file outside any test directory among them, and gives them again from its cache", async () => {
    const repo = queue.track(makeRepo({ initialCommit: false }));
    writePythonProject(repo, {
      config: queue.agentConfig,
      tests: {
        "tests/test_cases.py":
          'import json\nfrom pathlib import Path\n\nfrom pkg.calc import add\n\n\ndef test_cases():\n    for a, b, total in json.loads((Path(__file__).parent.parent / "data" / "cases.json").read_text()):\n        assert add(a, b) == total\n',
        "data/cases.json": "[[2, 2, 4]]\n",
      },
    });
    const commit = repo.commit("a data-driven test");
    const parsed = parseConfig(repo.read(".factory/config.toml"));
    if (!parsed.ok) throw new Error("the test's config does not parse");
    const surface = parsed.config.surfaces[0];
    if (!surface) throw new Error("no surface");
    const runDir = mkdtempSync(join(tmpdir(), "factory-baseline-reads-"));
    runDirs.push(runDir);
    const ctx = { root: repo.dir, config: parsed.config, signal: new AbortController().signal };
    const measured = await measureBaseline(ctx, { surface, commit, runDir });
    expect(measured.ok && measured.cached).toBe(false);
    expect(measured.ok ? measured.reads : []).toEqual(expect.arrayContaining(["data/cases.json", "pkg/calc.py", "tests/test_cases.py"]));
    const again = await measureBaseline(ctx, { surface, commit, runDir });
    expect(again.ok && again.cached).toBe(true);
    expect(again.ok ? again.reads : []).toContain("data/cases.json");
  });
});
