import { existsSync, realpathSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { listWorktrees } from "../git/worktree.js";

/** The packet's worktree went away while its attempt ran: removed by something other than the factory. */
export class WorktreeRemoved extends Error {
  constructor(readonly worktree: string) {
    super(`the worktree ${worktree} is gone`);
  }
}

/** Throws WorktreeRemoved when the worktree's checkout is no longer there. */
export function assertWorktreeThere(worktree: string): void {
  if (!existsSync(join(worktree, ".git"))) throw new WorktreeRemoved(worktree);
}

/**
 * Whether `error` ended an attempt because its worktree was removed under it: git still has the worktree
 * registered (the attempt made it) and its directory is gone. A worktree never made is not one removed.
 */
export async function removedUnder(root: string, worktree: string, error: unknown): Promise<boolean> {
  if (existsSync(join(worktree, ".git"))) return false;
  if (error instanceof WorktreeRemoved) return true;
  // git names a worktree by its real path; the factory's may go through a link (a home directory that is one).
  const real = throughLinks(worktree);
  return (await listWorktrees(root).catch(() => [])).some((entry) => entry.path === worktree || entry.path === real);
}

/** A path with the links of its nearest existing ancestor resolved (the rest of it may be gone). */
function throughLinks(path: string): string {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  try {
    return join(realpathSync(existing), relative(existing, path));
  } catch {
    return path;
  }
}

/** Pure: what the ledger and the person are told. */
export function removedReason(worktree: string, attempt: number): string {
  return `its worktree ${worktree} was removed while attempt ${attempt} ran, by something other than the factory (a cleaner of ${dirname(dirname(dirname(worktree)))}?); \`factory run\` starts the packet again (no attempt was spent)`;
}
