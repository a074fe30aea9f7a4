import { lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestResult } from "../gates/junit.js";
import { isFileLevel, namedBy, realCases } from "../gates/test-compare.js";
import { gitTry } from "../git/repo.js";

/**
 * Hidden holdout tests (issue 23): tests the team keeps out of the repository, under
 * `.factory/holdout/<ID>/` in the checkout (untracked, so in no git object the agent's git could read;
 * hidden inside the sandbox like the factory's state). They never enter the implementer's worktree,
 * prompt or environment, nor the reviewer's. After the gates they are copied into the gated tree at the
 * same relative paths, run by the surface's tests gates, and removed again; every case in them must
 * pass. The implementer learns only that a hidden test failed, and which invariants they guard.
 */
export const HOLDOUT_DIR = ".factory/holdout";

/** The holdout files of a packet, relative to its holdout directory (= their paths in the tree). */
export function holdoutFiles(root: string, packet: string): string[] {
  const base = join(root, HOLDOUT_DIR, packet);
  const found: string[] = [];
  const walk = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const entry of entries.sort()) {
      const path = join(dir, entry);
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) found.push(relative(base, path));
    }
  };
  walk(base);
  return found;
}

/** Why a packet's holdout files are not hidden, or undefined: committed, the agent's git could read them. */
export async function holdoutProblem(root: string, packet: string): Promise<string | undefined> {
  const tracked = await gitTry(root, ["ls-files", "--", `${HOLDOUT_DIR}/${packet}`]);
  if (tracked.ok && tracked.out.trim()) {
    return `its holdout files are committed (${tracked.out.trim().split("\n")[0]}${tracked.out.trim().includes("\n") ? ", …" : ""}): the agent's git can read them from the object store; keep ${HOLDOUT_DIR}/ untracked (git rm --cached -r ${HOLDOUT_DIR}/${packet}, and ignore it)`;
  }
  return undefined;
}

/** Pure: the cases of a tests gate's report that are the hidden files': a file that does not load counts as one failing case. */
export function hiddenCases(results: readonly TestResult[], files: readonly string[], surfaceDir: string, alone: boolean): TestResult[] {
  // Before the work a file that does not load is expected; after it, it is a failure. A passing entry named by a file is none of its cases.
  const loadErrors = results.filter((result) => result.outcome === "failed" && isFileLevel(result, files, surfaceDir));
  const own = (result: TestResult): boolean => !isFileLevel(result, files, surfaceDir) && (alone || namedBy(result.id, files, surfaceDir));
  return [...realCases(results).filter(own), ...loadErrors];
}

/** Pure: the holdout's verdict on the hidden cases that ran: every one must pass (skipped is not passing), and some must run. */
export function judgeHoldout(cases: readonly TestResult[], fileCount: number, invariants: readonly string[]): { status: "pass" | "fail"; summary: string; ran: number; failed: number } {
  const failed = cases.filter((result) => result.outcome !== "passed").length;
  const ran = { ran: cases.length, failed };
  if (cases.length === 0) return { ...ran, status: "fail", summary: `the packet's hidden tests yielded no test case in any tests gate (the team's holdout files, ${fileCount}): fix them` };
  const guards = invariants.map((id) => `"${id}"`).join(", ");
  if (failed > 0) return { ...ran, status: "fail", summary: `${failed} of ${cases.length} hidden test case(s) of the packet failed; they check its invariants ${guards}` };
  return { ...ran, status: "pass", summary: `${cases.length} hidden test case(s) passed` };
}
