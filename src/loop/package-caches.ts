import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { STATE_DIR } from "../ledger/store.js";

/** Where the package managers' stores and caches live for the factory's installs: under its own state, never the user's. */
export const PACKAGE_CACHES_DIR = "package-caches";

/**
 * Every package manager an install may run gets a store or cache the
 * factory owns, writable inside the sandbox: the user's own (pnpm's
 * `~/.local/share/pnpm/store`, npm's `~/.npm`) is read-only there, so an
 * install that needs a package the user's store lacks would fail with
 * EROFS, and an install must never write into the user's HOME anyway.
 * Shared by every worktree of the repository, so each package is fetched once.
 */
export function packageCaches(root: string): { dir: string; env: Record<string, string> } {
  const dir = join(root, STATE_DIR, PACKAGE_CACHES_DIR);
  const env = {
    npm_config_store_dir: join(dir, "pnpm-store"),
    npm_config_cache: join(dir, "npm"),
    YARN_CACHE_FOLDER: join(dir, "yarn"),
    UV_CACHE_DIR: join(dir, "uv"),
    PIP_CACHE_DIR: join(dir, "pip"),
  };
  for (const path of Object.values(env)) mkdirSync(path, { recursive: true });
  return { dir, env };
}
