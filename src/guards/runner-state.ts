import { appendFileSync, lstatSync, rmSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { dependencyDirs } from "../git/dependency-dirs.js";
import { restoreTracked, untrackedFiles } from "../git/worktree.js";
import { dirEntries } from "../util/dir-entries.js";
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
 * touched here: they are read-only to gates (guards/sandbox-policy.ts),
 * except a Python virtual environment, which `uv run` must write to; its
 * files (packages, `bin/`, `pyvenv.cfg`; not uv's dot-files at its top) are
 * compared instead, by path, size and change time (a change time cannot be set back),
 * and a difference fails the gates as the code's own doing; bytecode that
 * appeared there is removed instead (an import writes it honestly where the
 * installer compiled none).
 */
export interface RunnerState {
  /** Brings the worktree back to its committed state for the next tests run: the files removed, and the first installed file a run changed. */
  freshen(): Promise<{ removed: string[]; dependencyChanged?: string }>;
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
  let installed: Map<string, string> | undefined;
  return {
    async freshen() {
      before ??= new Set(await untrackedFiles(worktree));
      const now = installedFiles(worktree);
      installed ??= new Map(now);
      // Bytecode an import wrote for a package installed without it (uv compiles none by default) is honest,
      // but could be forged: new bytecode files are removed, and Python writes them again from the sources.
      for (const path of [...now.keys()]) {
        if (installed.has(path) || !isBytecode(path)) continue;
        rmSync(join(worktree, path), { force: true });
        now.delete(path);
      }
      await restoreTracked(worktree);
      const removed = leftForRunner(before, await untrackedFiles(worktree));
      for (const path of removed) rmSync(join(worktree, path), { force: true });
      if (removed.length > 0) appendFileSync(log, `removed before a tests run (left by an earlier one, or steering the runner): ${removed.join(", ")}\n`);
      const dependencyChanged = firstDifference(installed, now);
      return dependencyChanged ? { removed, dependencyChanged } : { removed };
    },
  };
}

/** Pure: the first path whose signature differs between two listings (added, removed or changed). */
export function firstDifference(before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): string | undefined {
  for (const [path, signature] of now) if (before.get(path) !== signature) return path;
  for (const path of before.keys()) if (!now.has(path)) return path;
  return undefined;
}

/**
 * Every file of the worktree's virtual environments, with its size and change time, relative to the
 * worktree: its packages, and its `bin/` and `pyvenv.cfg` too (a rewritten `bin/python` or `home` would
 * run the next gate). Not the dot-files at its top, which `uv run` writes on every start (`.lock`, `.tmp…`).
 */
function installedFiles(worktree: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string, top: boolean): void => {
    for (const entry of dirEntries(dir)) {
      if (top && entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path, false);
        continue;
      }
      try {
        const stat = lstatSync(path, { bigint: true });
        files.set(relative(worktree, path), `${stat.size}:${stat.ctimeNs}`);
      } catch {
        // gone while listed: the next listing says so
      }
    }
  };
  for (const venv of dependencyDirs(worktree).filter((dir) => [".venv", "venv"].includes(basename(dir)))) walk(venv, true);
  return files;
}
