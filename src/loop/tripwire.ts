import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { gitRun } from "../git/repo.js";

/** Path (relative to the repository's git directory) → a hash of what is there. */
export type GitStateFingerprint = Map<string, string>;

/**
 * What an agent or the code it wrote must never change: the repository's git
 * configuration, its hooks and `info/`, and the task worktree's own config.
 * Each of them can make later git commands (the factory's, or the user's
 * own) run the agent's code or see a different tree.
 */
export async function fingerprintGitState(root: string, worktree: string): Promise<GitStateFingerprint> {
  const common = (await gitRun(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim();
  const own = (await gitRun(worktree, ["rev-parse", "--absolute-git-dir"])).trim();
  const fingerprint: GitStateFingerprint = new Map();
  const add = (path: string): void => {
    if (!existsSync(path) && !isLink(path)) return;
    const stat = lstatSync(path);
    const name = relative(common, path) || ".";
    if (stat.isSymbolicLink()) fingerprint.set(name, `link ${readlinkSync(path)}`);
    else if (stat.isDirectory()) for (const entry of readdirSync(path)) add(join(path, entry));
    else fingerprint.set(name, `${stat.mode.toString(8)} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
  };
  for (const path of ["config", "config.worktree", "hooks", "info"]) add(join(common, path));
  add(join(own, "config.worktree"));
  return fingerprint;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Pure: what differs between two fingerprints, as "path changed|appeared|disappeared", sorted. */
export function trippedBy(before: GitStateFingerprint, after: GitStateFingerprint): string[] {
  const changes: string[] = [];
  for (const [path, hash] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push(`.git/${path} appeared`);
    else if (was !== hash) changes.push(`.git/${path} changed`);
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push(`.git/${path} disappeared`);
  return changes.sort();
}
