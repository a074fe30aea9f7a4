import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join } from "node:path";

/**
 * Where a repository's worktrees live: outside it, under
 * `<factory home>/worktrees/<name>-<hash of the repository's path>`. Tools that
 * look for configuration by walking up from where they run (eslint, prettier,
 * editorconfig, pytest's rootdir and conftest search, tsconfig `extends`)
 * must never reach the user's checkout and its files from a worktree. Task
 * worktrees are named by packet id (a letter first); the factory's scratch
 * worktrees start with `_` (`_baseline-…`, `_batch-…`), never with a dot.
 */
export function worktreesDir(root: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // not there (yet): its path as given
  }
  return join(factoryHome(), "worktrees", `${basename(real)}-${createHash("sha256").update(real).digest("hex").slice(0, 12)}`);
}

/**
 * The factory's directory for worktrees: `<cache>/factory` (`$XDG_CACHE_HOME`,
 * else `~/.cache`) when that path has no dot-directory in it, else
 * `/var/tmp/factory-<uid>` (kept across reboots, this user's alone). Test
 * runners exclude dot-directories by pattern matched against absolute paths
 * (vitest 0.x excludes any path through `.cache`, `.git`, `.idea`, `.output` or
 * `.temp`), so a worktree under `~/.cache` ran no test at all.
 */
export function factoryHome(): string {
  const cache = process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), ".cache");
  const inCache = join(cache, "factory");
  if (!hasDotDirectory(inCache)) return inCache;
  let home = homes.get(inCache);
  if (home === undefined) {
    const uid = process.getuid?.();
    const shared = uid === undefined ? undefined : join(SHARED_TMP, `factory-${uid}`);
    home = (shared && uid !== undefined ? ownDirectory(shared, uid) : undefined) ?? inCache;
    homes.set(inCache, home);
    if (shared && home === inCache) fallbacks.set(inCache, fallbackWarning(shared, inCache));
  }
  return home;
}
const homes = new Map<string, string>();
const fallbacks = new Map<string, string>();

/** What to tell a person when the worktrees could not go to `/var/tmp/factory-<uid>` and went under a dot-directory; else undefined. */
export function factoryHomeWarning(): string | undefined {
  const home = factoryHome();
  return fallbacks.get(home);
}

/** Pure: the warning for worktrees that fell back to a cache path with a dot-directory. */
export function fallbackWarning(shared: string, inCache: string): string {
  return `${shared} is not this user's own directory (another user's, a link, or writable by others), so the worktrees go under ${inCache}, whose dot-directory some test runners skip (vitest 0.x finds no test there); remove ${shared}, or set XDG_CACHE_HOME to a path without a dot-directory`;
}

/** Where a cache path with a dot-directory in it gives way to: a directory kept across reboots. */
export const SHARED_TMP = "/var/tmp";

/** Pure: whether a path has a component starting with a dot (`.cache`), which tools may exclude. */
export function hasDotDirectory(path: string): boolean {
  return path.split(/[\\/]/).some((part) => part.startsWith(".") && part !== "." && part !== "..");
}

/**
 * `dir` made (0700) or found as this user's own real directory, not writable
 * by others; undefined when another user made it (or a link is there) in
 * the shared directory: the factory never works in a place another user controls.
 */
export function ownDirectory(dir: string, uid: number): string | undefined {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // there already (checked below), or the shared directory is not writable
  }
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o022) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}
