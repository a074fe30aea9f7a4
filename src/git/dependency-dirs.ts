import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { dirEntries } from "../util/dir-entries.js";
import { gitDirOf } from "./dirs.js";

/**
 * What an install produces that gates need and that is not the work (`node_modules`, a virtual
 * environment, tox's and nox's environments, egg metadata): never committed, and kept in a worktree
 * only where the factory's own steps made it (DESIGN §6, "The verdict tree").
 */
export const DEPENDENCY_PATTERNS = ["node_modules", ".venv", "venv", "*.egg-info", ".eggs", ".tox", ".nox"];

/** Whether a directory's name is one of DEPENDENCY_PATTERNS (a name, or `*.suffix`). */
export function isDependencyName(name: string): boolean {
  return DEPENDENCY_PATTERNS.some((pattern) => (pattern.startsWith("*") ? name.endsWith(pattern.slice(1)) : name === pattern));
}

/** How deep under the worktree dependency directories are looked for: a surface two directories down (`packages/api`) has its own. */
const DEPTH = 2;

/** The dependency directories in a worktree (absolute paths), at its root and up to two levels down; never inside one. */
export function dependencyDirs(worktree: string): string[] {
  const found: string[] = [];
  const scan = (dir: string, depth: number): void => {
    for (const entry of dirEntries(dir)) {
      if (!entry.isDirectory() || entry.name === ".git" || entry.name === ".factory") continue;
      const path = join(dir, entry.name);
      if (isDependencyName(entry.name)) found.push(path);
      else if (depth > 0) scan(path, depth - 1);
    }
  };
  scan(worktree, DEPTH);
  return found;
}

/** In the worktree's own git directory: read-only to everything of the packet's inside the sandbox. */
const RECORD = "factory-dependencies.json";

/**
 * Records the dependency directories the worktree holds now as the factory's own (made by its install,
 * its baseline or planted check, before any agent ran): reduceToCommit keeps these and removes every
 * other one, so a `.tox/` or `node_modules/` an implementer made never reaches a gate.
 */
export async function recordDependencies(worktree: string): Promise<void> {
  const dirs = dependencyDirs(worktree).map((dir) => relative(worktree, dir));
  writeFileSync(join(await gitDirOf(worktree), RECORD), JSON.stringify(dirs));
}

/** The factory's own dependency directories of the worktree (relative paths); undefined when none was ever recorded (a worktree of an older version). */
export async function recordedDependencies(worktree: string): Promise<string[] | undefined> {
  try {
    const read = JSON.parse(readFileSync(join(await gitDirOf(worktree), RECORD), "utf8")) as unknown;
    return Array.isArray(read) ? read.filter((dir): dir is string => typeof dir === "string") : undefined;
  } catch {
    return undefined;
  }
}
