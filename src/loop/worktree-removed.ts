import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
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
  return (await listWorktrees(root).catch(() => [])).some((entry) => entry.path === worktree);
}

/** Pure: what the ledger and the person are told. */
export function removedReason(worktree: string, attempt: number): string {
  return `its worktree ${worktree} was removed while attempt ${attempt} ran, by something other than the factory (a cleaner of ${dirname(dirname(dirname(worktree)))}?); \`factory run\` starts the packet again (no attempt was spent)`;
}
