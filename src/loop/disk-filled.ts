import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { removeWorktree } from "../git/worktree.js";
import { lowSpace, minFreeBytes } from "../util/resources.js";
import { formatSize } from "../util/size.js";
import { type RunContext, worktreePath } from "./context.js";

/** In an attempt's run directory: the free space of its worktree's filesystem when its implementer started. */
export const SPACE_BEFORE_AGENT = "space-before-implementer.json";

/**
 * Whether an attempt that ran out of disk filled it itself (a kept dependency directory such as `.tox/`
 * grown without end, a file written until the disk said no): the disk had room when its implementer
 * started, and removing its worktree (what the attempt wrote, which nothing else needs) gives the room
 * back. Then the attempt is at fault, not the machine: a reason to block it, and the rest of the queue
 * goes on. Undefined when the disk is not short now (another resource ran out), was already short when
 * the implementer started, or is still short without the worktree: the machine's (see stoppedByMachine).
 * In the last case the worktree is gone afterwards too.
 */
export async function filledByAttempt(ctx: Pick<RunContext, "root">, packet: string, runDir: string): Promise<string | undefined> {
  let before: { free: number; total: number };
  try {
    before = JSON.parse(readFileSync(join(runDir, SPACE_BEFORE_AGENT), "utf8")) as { free: number; total: number };
  } catch {
    return undefined; // the implementer never started: nothing the attempt wrote
  }
  if (before.free < minFreeBytes(before.total)) return undefined;
  const worktree = worktreePath(ctx.root, packet);
  // Only a disk short of room now: open files or memory running out is no disk the attempt filled.
  if (!lowSpace([worktree, runDir, ctx.root])) return undefined;
  const held = treeBytes(worktree);
  await removeWorktree(ctx.root, worktree);
  if (lowSpace([dirname(worktree), runDir, ctx.root])) return undefined;
  return `the attempt filled the disk from inside its worktree: the filesystem had ${formatSize(before.free)} free when its implementer started, the worktree held ${formatSize(held)} when it ran out, and removing the worktree gave the room back (the attempt is spent)`;
}

/** The bytes a directory's files take on disk, links not followed; what cannot be read counts nothing. */
function treeBytes(dir: string): number {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const at = pending.pop() as string;
    let entries: string[];
    try {
      entries = readdirSync(at);
    } catch {
      continue;
    }
    for (const name of entries) {
      const path = join(at, name);
      try {
        const stat = lstatSync(path);
        if (stat.isDirectory()) pending.push(path);
        else total += stat.blocks * 512;
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}
