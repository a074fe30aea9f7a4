import { join } from "node:path";
import { dirEntries } from "../util/dir-entries.js";
import { CACHE_PATTERNS } from "./cache-patterns.js";
import { gitRun } from "./repo.js";

/** Whether a directory's name is one of the cache patterns (a name, or `*.suffix`). */
const isCache = (name: string): boolean => CACHE_PATTERNS.some((pattern) => (pattern.startsWith("*.") ? name.endsWith(pattern.slice(1)) : name === pattern));

/**
 * Repository-relative directories under `worktree` that hold a git repository of their own (a `.git`
 * directory or file): made there by an agent or a gate, they carry a config of their own (filters, hooks)
 * that git would run as the user if the factory's git recursed into them. Read from the file system, no
 * link followed; dependency and cache directories (where a package manager keeps git checkouts) are not
 * the work and are skipped.
 */
export function nestedRepositories(worktree: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    const entries = dirEntries(join(worktree, relative));
    if (relative !== "" && entries.some((entry) => entry.name === ".git")) {
      found.push(relative);
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === ".git" || isCache(entry.name)) continue;
      walk(relative === "" ? entry.name : `${relative}/${entry.name}`);
    }
  };
  walk("");
  return found.sort();
}

/** Paths the index of `worktree` holds as gitlinks (submodules, or nested repositories added before). Reads only the index. */
export async function indexGitlinks(worktree: string): Promise<string[]> {
  const out = await gitRun(worktree, ["ls-files", "--stage", "-z"]);
  return out
    .split("\0")
    .filter((record) => record.startsWith("160000 "))
    .map((record) => record.slice(record.indexOf("\t") + 1));
}
