import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import type { Surface } from "../config/types.js";
import { gitRun } from "../git/repo.js";
import { parseStatusV2 } from "../git/status.js";
import { STATE_DIR } from "../ledger/store.js";
import { copyTree } from "../process/copy.js";

/**
 * An install is reused across worktrees whose dependency state is the same:
 * the same install command in the same surface directory, and the same lock
 * and manifest files there (by blob id at the worktree's commit). Only
 * `node_modules` is reused: a Python virtual environment names its own
 * absolute path in its scripts, so a copy of it would run the first
 * worktree's interpreter. The copy is a full one (`cp --reflink=auto`: copy-on-write
 * where the file system can), never hard links: a gate writing into one
 * worktree's dependencies must not change what another worktree imports.
 *
 * An install is saved only when it left nothing but `node_modules` in the
 * worktree (generated files would be missing from a copy), right after it
 * ran: before anything of the packet's has run in that worktree; and only
 * when it is relocatable: pnpm's `.bin` shims and some packages' state name
 * the absolute path of the worktree that built them, which a copy would
 * point at a deleted tree ("MISSING DEP Can not find dependency 'vite'").
 */

/** A lock file is required: without one an install resolves versions when it runs, and two runs may differ. */
const LOCK_FILES = ["package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock"];
const MANIFESTS = ["package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ...LOCK_FILES];
const DEPENDENCIES = "node_modules";
const KEEP = 3;

export const INSTALLS_DIR = "installs";

/** Pure: the key of an install, or undefined when it cannot be reused (no lock file). */
export function installKey(install: string, dir: string, manifests: readonly (readonly [string, string])[]): string | undefined {
  if (!manifests.some(([name]) => LOCK_FILES.includes(name))) return undefined;
  const sorted = [...manifests].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify({ install, dir, manifests: sorted, relocatable: true })) // installs saved before the relocatability check are not reused
    .digest("hex")
    .slice(0, 32);
}

/** The key of `surface`'s install in `worktree`, from its manifest files at HEAD. */
export async function installKeyOf(worktree: string, surface: Surface & { install: string }): Promise<string | undefined> {
  const dir = posix.normalize(surface.dir);
  const out = await gitRun(worktree, ["ls-tree", "-z", "HEAD", "--", dir === "." ? "./" : `${dir}/`]);
  const manifests: [string, string][] = [];
  for (const record of out.split("\0")) {
    const match = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(record);
    const name = match?.[2]?.split("/").pop();
    if (match?.[1] && name && MANIFESTS.includes(name)) manifests.push([name, match[1]]);
  }
  return installKey(surface.install, dir, manifests);
}

function cacheDir(root: string, key: string): string {
  return join(root, STATE_DIR, INSTALLS_DIR, key);
}

/** Copies a saved install into the worktree; false (and nothing left half-copied) when there is none or it cannot be copied. */
export async function restoreInstall(root: string, key: string, worktree: string, surface: Surface): Promise<boolean> {
  const saved = join(cacheDir(root, key), DEPENDENCIES);
  const target = join(worktree, surface.dir, DEPENDENCIES);
  if (!existsSync(saved) || existsSync(target)) return false;
  if (await copyTree(saved, target)) return true;
  rmSync(target, { recursive: true, force: true });
  return false;
}

/** Saves the install just made in `worktree` under `key`, when it left nothing but node_modules; the reason when it is not saved. */
export async function saveInstall(root: string, key: string, worktree: string, surface: Surface): Promise<string | undefined> {
  const dir = cacheDir(root, key);
  if (existsSync(dir)) return undefined;
  const made = join(worktree, surface.dir, DEPENDENCIES);
  if (!existsSync(made)) return `it made no ${DEPENDENCIES}`;
  const status = parseStatusV2(await gitRun(worktree, ["status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored=matching", "--", surface.dir]));
  const prefix = posix.join(surface.dir, DEPENDENCIES);
  const other = status.entries.find((entry) => entry.path !== prefix && !entry.path.startsWith(`${prefix}/`));
  if (other) return `it also changed ${other.path}, which a copy of ${DEPENDENCIES} would not bring`;
  const pinned = namesItsPath(made, worktree);
  if (pinned) return `${pinned} names this worktree's absolute path, so a copy elsewhere would point back here`;
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  if (!(await copyTree(made, join(staging, DEPENDENCIES)))) {
    rmSync(staging, { recursive: true, force: true });
    return `copying ${DEPENDENCIES} failed`;
  }
  try {
    renameSync(staging, dir); // published whole, or not at all
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process saved the same key first
  }
  pruneInstalls(join(root, STATE_DIR, INSTALLS_DIR));
  return undefined;
}

/** Keeps the most recently saved installs only. */
function pruneInstalls(dir: string): void {
  const saved = readdirSync(dir)
    .filter((name) => /^[0-9a-f]{32}$/.test(name))
    .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of saved.slice(KEEP)) rmSync(join(dir, old.name), { recursive: true, force: true });
}

/** How much of a dependency tree's small state files is read for a worktree path: enough for shims and manifests. */
const SCAN_LIMITS = { files: 4_000, bytes: 256 * 1024 };

/**
 * The first file of an install's own small state that names `worktree` by its absolute path: the
 * executables' shims (`node_modules/.bin`, `.pnpm/node_modules/.bin`) and the package managers' state
 * files at the top (`.modules.yaml`, `.package-lock.json`, `.yarn-state.yml`). Relative to `node_modules`.
 */
export function namesItsPath(nodeModules: string, worktree: string): string | undefined {
  const needle = Buffer.from(worktree);
  const candidates: string[] = [];
  for (const dir of [".bin", join(".pnpm", "node_modules", ".bin")]) {
    try {
      for (const name of readdirSync(join(nodeModules, dir))) candidates.push(join(dir, name));
    } catch {
      // no such directory
    }
  }
  candidates.push(".modules.yaml", ".package-lock.json", ".yarn-state.yml");
  for (const path of candidates.slice(0, SCAN_LIMITS.files)) {
    const full = join(nodeModules, path);
    try {
      const stat = lstatSync(full);
      if (!stat.isFile() || stat.size > SCAN_LIMITS.bytes) continue;
      if (readFileSync(full).includes(needle)) return `${DEPENDENCIES}/${path}`;
    } catch {
      // gone or unreadable: nothing it names
    }
  }
  return undefined;
}
