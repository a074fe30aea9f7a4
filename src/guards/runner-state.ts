import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { restoreTracked, untrackedFiles } from "../git/worktree.js";
import { steeringPart } from "./runner-steering.js";

/**
 * Every tests run of a gated tree starts from the tree as it was committed
 * (issue 23): the code under test runs inside the runner and may write
 * anything into the worktree, so without this a `conftest.py`, a
 * `pytest.toml`, forged bytecode or a rewritten test file left by one run
 * would steer the next one — the planted tests run on their own, an
 * invariant's check, the hidden holdout tests. Before each of them, tracked
 * files get HEAD's bytes back and every untracked file is removed that the
 * tree did not hold when its tests runs began (what a build gate made before
 * them stays), and so is every runner configuration, plugin entry point and
 * bytecode file, whenever it appeared. The dependency directories are not
 * touched here: they are read-only to gates (guards/sandbox-policy.ts).
 */
export interface RunnerState {
  /** Brings the worktree back to its committed state for the next tests run; the files removed. */
  freshen(): Promise<string[]>;
}

/** Pure: of the untracked files `now` in the tree, those a tests run must not start with. */
export function leftForRunner(before: ReadonlySet<string>, now: readonly string[]): string[] {
  return now.filter((path) => !before.has(path) || steeringPart(path) !== undefined || isBytecode(path));
}

function isBytecode(path: string): boolean {
  return /(^|\/)__pycache__\//.test(path) || /\.py[co]$/.test(path);
}

/**
 * The worktree's state for its tests runs: what it holds beyond the commit
 * is taken when the first of them is about to run; `log` names what each
 * freshening removed.
 */
export function runnerState(worktree: string, log: string): RunnerState {
  let before: Set<string> | undefined;
  return {
    async freshen() {
      before ??= new Set(await untrackedFiles(worktree));
      await restoreTracked(worktree);
      const removed = leftForRunner(before, await untrackedFiles(worktree));
      for (const path of removed) rmSync(join(worktree, path), { force: true });
      if (removed.length > 0) appendFileSync(log, `removed before a tests run (left by an earlier one, or steering the runner): ${removed.join(", ")}\n`);
      return removed;
    },
  };
}
