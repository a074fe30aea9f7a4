import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
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
 * ran: before anything of the packet's has run in that worktree. pnpm's
 * `.bin` shims (at every level) and the package managers' state files name
 * the absolute path of the worktree that built them: a copy has that path
 * rewritten to its own worktree's in those files, else it would point at
 * another tree, or a deleted one ("MISSING DEP Can not find dependency
 * 'vite'"). An install with an absolute symbolic link into its worktree is
 * not saved: nothing rewrites a link.
 */

/** A lock file is required: without one an install resolves versions when it runs, and two runs may differ. */
const LOCK_FILES = ["package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock"];
const MANIFESTS = ["package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ...LOCK_FILES];
const DEPENDENCIES = "node_modules";
/** Beside a saved node_modules: the absolute path of the worktree that built it. */
const BUILT_AT = "built-at";
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
  if (await copyTree(saved, target)) {
    let builtAt: string | undefined;
    try {
      builtAt = readFileSync(join(cacheDir(root, key), BUILT_AT), "utf8");
    } catch {
      // it named no worktree when it was saved: nothing to rewrite
    }
    if (builtAt === undefined || builtAt === worktree || relocate(target, builtAt, worktree)) return true;
  }
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
  const { files, link } = pathNaming(made, worktree);
  if (link) return `${DEPENDENCIES}/${link} is a symbolic link to this worktree's absolute path, which a copy elsewhere cannot follow`;
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  if (files.some((path) => names(join(made, path), worktree))) writeFileSync(join(staging, BUILT_AT), worktree); // its copies are relocated
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

/** How much of a dependency tree is walked and read for a worktree path: beyond it, a copy is not relocated (installed afresh). */
const SCAN_LIMITS = { entries: 400_000, files: 20_000, bytes: 16 * 1024 * 1024 };
const STATE_FILES = [".modules.yaml", ".package-lock.json", ".yarn-state.yml"];

/**
 * The files of an install that may name its worktree's absolute path, relative to `nodeModules`: every
 * executable shim (files in any `.bin` directory: pnpm writes one per package that has dependencies with
 * executables) and the package managers' state files at the top; and the first symbolic link whose absolute
 * target is inside `worktree`. Links are never followed. `truncated`: the tree was larger than the walk's
 * limits, so some of them may be missing.
 */
export function pathNaming(nodeModules: string, worktree: string): { files: string[]; link?: string; truncated: boolean } {
  const files = STATE_FILES.filter((name) => existsSync(join(nodeModules, name)));
  let link: string | undefined;
  let seen = 0;
  let truncated = false;
  const walk = (relative: string): void => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(join(nodeModules, relative), { withFileTypes: true });
    } catch {
      return; // gone or unreadable
    }
    const inBin = posix.basename(relative) === ".bin";
    for (const entry of entries) {
      if (++seen > SCAN_LIMITS.entries || files.length > SCAN_LIMITS.files) {
        truncated = true;
        return;
      }
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) {
        if (link === undefined && linksInto(join(nodeModules, path), worktree)) link = path;
      } else if (entry.isDirectory()) walk(path);
      else if (inBin && entry.isFile()) files.push(path);
    }
  };
  walk("");
  return link === undefined ? { files, truncated } : { files, link, truncated };
}

/** Whether the file at `path` names `worktree`; true when it is too large to read (not known to be free of it). */
function names(path: string, worktree: string): boolean {
  try {
    return lstatSync(path).size > SCAN_LIMITS.bytes || readFileSync(path).includes(Buffer.from(worktree));
  } catch {
    return false; // gone meanwhile: it names nothing
  }
}

function linksInto(path: string, worktree: string): boolean {
  try {
    const target = readlinkSync(path);
    return target === worktree || target.startsWith(`${worktree}/`);
  } catch {
    return false; // gone meanwhile: it names nothing
  }
}

/** Pure: `text` with every whole-path mention of `from` (not of a longer path it begins) replaced by `to`. */
export function relocateText(text: string, from: string, to: string): string {
  const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`${escaped}(?![^/"'\`:;\\s])`, "g"), () => to);
}

/**
 * Rewrites the absolute path of the worktree that built a copied install to the one it was copied into, in
 * its shims and state files; false when it could not, or when the old path is still named there after.
 */
function relocate(nodeModules: string, from: string, to: string): boolean {
  const { files, link, truncated } = pathNaming(nodeModules, from);
  if (link || truncated) return false; // a link, or a shim not walked, would still name the old tree
  const needle = Buffer.from(from);
  try {
    for (const path of files) {
      const full = join(nodeModules, path);
      if (lstatSync(full).size > SCAN_LIMITS.bytes) return false; // not read, so not known to be free of it
      const bytes = readFileSync(full);
      if (!bytes.includes(needle)) continue;
      const text = relocateText(bytes.toString("utf8"), from, to);
      if (relocateText(text, from, "") !== text) return false; // still named (the new path holds the old one)
      writeFileSync(full, text); // the copy's own file: a full copy, never a link into the saved one
    }
  } catch {
    return false;
  }
  return true;
}
