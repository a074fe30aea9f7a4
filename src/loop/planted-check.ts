import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Surface } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import { describeNoFailingCase, hasCasesOf, hasFailingPlantedCase, isTestFile, type PlantedCases, type PlantedCount, plantedCases } from "../gates/test-compare.js";
import { objectId } from "../git/repo.js";
import { allScopeAtTip } from "../packet/content-lint.js";
import { runTests } from "./baseline.js";
import type { RunContext } from "./context.js";

export type PlantedCheck =
  | {
      ok: true;
      cases: Record<string, PlantedCases>;
      counts: PlantedCount[];
      /** New versions of test files that yield no case on this machine, as the tip's versions did not (tests defined for another platform): not checked here. */
      noCases: string[];
    }
  | { ok: false; reason: string };

/**
 * Right after planting, before any implementation: every planted test file
 * must yield test cases in some tests gate's report, and at least one planted
 * case (new, or changed by the planting) must fail. The failing cases are
 * recorded (they must pass after the work), and so are the tests the planting
 * took away (their absence is the author's, never a regression). A new
 * version of a test file that yields no case here, as the tip's version did
 * not either, is said and left out: this machine runs none of its tests.
 */
export async function checkPlantedTests(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { worktree: string; surface: Surface; baseline: ReadonlyMap<string, TestResult[]>; testFiles: string[]; runDir: string; allowedPaths: readonly string[] | undefined; tip: string },
): Promise<PlantedCheck> {
  // The planted files alone where the gate can name them: the rest of the suite runs once, in the gates. Not when
  // a name is off the runners' conventions: named, a runner collects any file, so only the whole suite shows it never runs.
  const cases: Record<string, PlantedCases> = {};
  const ran = new Set<string>();
  const counts: PlantedCount[] = [];
  const measure = async (files: string[], name: string): Promise<string | undefined> => {
    const alone = files.every(isTestFile) ? { only: files } : {};
    const run = await runTests(ctx, { worktree: input.worktree, surface: input.surface, runDir: join(input.runDir, name), ...alone });
    if (!run.ok) return `the planted tests break the test run, which worked on the baseline: ${run.reason}`;
    for (const [gate, measured] of run.runs) {
      const found = plantedCases({ files, surfaceDir: input.surface.dir, baseline: input.baseline.get(gate) ?? [], now: measured.results, only: measured.alone === true });
      if (found.files.length === 0) continue;
      const known = cases[gate];
      const skipped = { ...known?.skipped, ...found.skipped };
      const removed = [...(known?.removed ?? []), ...found.removed];
      const seen = [...(known?.seen ?? []), ...found.seen];
      cases[gate] = {
        cases: [...(known?.cases ?? []), ...found.cases],
        files: [...(known?.files ?? []), ...found.files],
        ...(removed.length ? { removed } : {}),
        ...(Object.keys(skipped).length ? { skipped } : {}),
        ...(seen.length ? { seen } : {}),
      };
      for (const file of found.files) ran.add(file);
      counts.push(...found.counts);
    }
    return undefined;
  };
  const broke = await measure(input.testFiles, "planted-check");
  if (broke) return { ok: false, reason: broke };
  // A runner that stops at a file it cannot collect yet (pytest does, for a module the work will add) ran none of the
  // others: they are run again without it.
  const unrun = input.testFiles.filter((file) => !ran.has(file));
  if (unrun.length > 0 && unrun.length < input.testFiles.length && counts.some((count) => count.loadError)) {
    const again = await measure(unrun, "planted-check-rest");
    if (again) return { ok: false, reason: again };
  }
  // A new version of a test file the tip has, whose tip version yielded no case at the baseline either (its tests are
  // defined only on another platform), did not "never run" for a wrong name: it runs nothing here, as before.
  const baselines = [...input.baseline.values()].flat();
  const noCases: string[] = [];
  for (const file of input.testFiles.filter((candidate) => !ran.has(candidate))) {
    if (hasCasesOf(baselines, file, input.surface.dir) || !(await objectId(ctx.root, `${input.tip}:${file}`))) continue;
    noCases.push(file);
    ran.add(file);
  }
  const neverRan = input.testFiles.filter((file) => !ran.has(file));
  if (neverRan.length > 0) {
    return {
      ok: false,
      reason: neverRan
        .map((file) => `planted test ${file} never ran: put it where the runner collects tests (its name and directory), or declare it in the packet's support_files if it is not a test`)
        .join("; "),
    };
  }
  if (!hasFailingPlantedCase(counts)) {
    // Said only of new test files: a new version of a test the tip has (reformatted, say) passing proves nothing landed.
    const fresh = await Promise.all(input.testFiles.map(async (file) => (await objectId(ctx.root, `${input.tip}:${file}`)) === undefined));
    const done = fresh.every(Boolean) ? allScopeAtTip(input.allowedPaths, (path) => existsSync(join(input.worktree, path))) : undefined;
    const named = done && done.length > 6 ? `${done.slice(0, 5).join(", ")} and ${done.length - 5} more` : done?.join(", ");
    const landed = done ? `; every file it may change (${named}) is already at the tip: the work may have landed already (by hand, or through another packet); if so, remove the packet` : "";
    return { ok: false, reason: `planted tests cannot tell right from wrong: ${describeNoFailingCase(counts)}${landed}` };
  }
  return { ok: true, cases, counts, noCases };
}
