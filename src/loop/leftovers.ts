import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeWorktree } from "../git/worktree.js";
import { isAlive } from "../ledger/run-lock.js";
import { worktreesDir } from "./context.js";

/**
 * What a killed factory process leaves behind, found by the pid in its name
 * and removed at the next start when that process is gone: sandbox temporary
 * directories (`factory-sandbox-<pid>-…` in the temporary directory) and
 * scratch worktrees (`_baseline-<commit>-<pid>-<n>`, `_rerun-…`, `_batch-<commit>-<pid>-<n>`, `_doctor-<pid>`,
 * `_canary-<pid>`, `_assess-<pid>`, `_cut-<pid>`, `_mutants-<pid>` beside the task worktrees; older versions
 * began them with a dot). A process that ends normally
 * removes its own; a live one's are never touched.
 */
export const SANDBOX_PREFIX = "factory-sandbox-";

/** Pure: the pid a leftover's name carries, or undefined when the name is not one of the factory's. */
export function leftoverPid(name: string): number | undefined {
  const match = /^factory-sandbox-(\d+)-/.exec(name) ?? /^[._](?:baseline|rerun|batch)-[0-9a-f]+-(\d+)-\d+$/.exec(name) ?? /^[._](?:doctor|canary|assess|cut|mutants)-(\d+)$/.exec(name);
  return match?.[1] ? Number(match[1]) : undefined;
}

/** Removes the dead processes' leftovers: sandbox directories, and scratch worktrees of the repository at `root`. */
export async function sweepLeftovers(root: string, temporary: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const dead = (name: string): boolean => {
    const pid = leftoverPid(name);
    return pid !== undefined && pid !== process.pid && !isAlive(pid);
  };
  for (const name of list(temporary).filter((entry) => entry.startsWith(SANDBOX_PREFIX) && dead(entry))) {
    rmSync(join(temporary, name), { recursive: true, force: true });
    removed.push(join(temporary, name));
  }
  const worktrees = worktreesDir(root);
  for (const name of list(worktrees).filter((entry) => /^[._]/.test(entry) && dead(entry))) {
    await removeWorktree(root, join(worktrees, name));
    rmSync(join(worktrees, name), { recursive: true, force: true }); // not registered, or half-made
    removed.push(join(worktrees, name));
  }
  return removed;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
