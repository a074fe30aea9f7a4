import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "../ledger/run-lock.js";
import { commonGitDir } from "./dirs.js";
import { gitRun } from "./repo.js";
import { listWorktrees } from "./worktree.js";

/**
 * The lock files git leaves when a git command is killed, that a landing on
 * `branch` would need free: the branch's ref lock, packed-refs' lock, and the
 * index lock of the checkout that has the branch. Each blocks every git
 * write there until someone removes it. Absolute paths, oldest first.
 */
export async function leftGitLocks(root: string, branch: string, waitMs = 2_000): Promise<string[]> {
  const commonDir = absolute(root, (await gitRun(root, ["rev-parse", "--git-common-dir"])).trim());
  const candidates = [join(commonDir, "refs", "heads", `${branch}.lock`), join(commonDir, "packed-refs.lock")];
  const checkout = (await listWorktrees(root)).find((worktree) => worktree.branch === branch);
  if (checkout) candidates.push(join(absolute(checkout.path, (await gitRun(checkout.path, ["rev-parse", "--git-dir"])).trim()), "index.lock"));
  // A lock a live process holds now is not left: another factory process's landing holds the checkout's index
  // lock (its token names it), and a git command of another worker holds a ref lock for a moment.
  let present = candidates.filter((path) => existsSync(path) && !heldByLiveFactory(path));
  for (const deadline = Date.now() + waitMs; present.length > 0 && Date.now() < deadline; ) {
    await sleep(100);
    present = present.filter((path) => existsSync(path) && !heldByLiveFactory(path));
  }
  return present.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

/** Whether a lock file is a live factory process's (the checkout move writes `factory <pid> <token>` into the index lock). */
function heldByLiveFactory(path: string): boolean {
  try {
    const pid = Number(/^factory (\d+) /.exec(readFileSync(path, "utf8"))?.[1]);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid);
  } catch {
    return false; // gone meanwhile: nothing is left
  }
}

function absolute(cwd: string, path: string): string {
  return isAbsolute(path) ? path : join(cwd, path);
}

/** Pure: the lock file git names in a refusal ("Unable to create '…/x.lock': File exists"), if any. */
export function lockInMessage(message: string): string | undefined {
  return /Unable to create '([^']+\.lock)': File exists/.exec(message)?.[1];
}

/** Pure: what to tell a person about a lock file left in their repository. */
export function lockLeftMessage(path: string): string {
  return `git's lock file ${path} is left (by a git command that was killed, or one still running): git writes nothing there while it exists. If no git process is running in this repository (\`pgrep -a git\` shows none), remove it: rm '${path}'`;
}

/**
 * Removes the index lock a killed factory command left in one of the
 * factory's own worktrees (a `git reset` of an `approve` stopped mid-way),
 * which would refuse every later git command there. For a caller that holds
 * the lock excluding every other factory command from that worktree: a lock
 * still there after `waitMs` (time for a git child that outlived its parent
 * to finish) is nobody's. The worktree's git directory is found from the
 * repository's side, never through its `.git` file (the agent wrote that
 * tree). Returns the path removed.
 */
export async function clearLeftWorktreeLock(root: string, worktree: string, waitMs = 2_000): Promise<string | undefined> {
  const admin = await adminDirOf(root, worktree);
  if (!admin) return undefined;
  const lock = join(admin, "index.lock");
  for (const deadline = Date.now() + waitMs; existsSync(lock) && Date.now() < deadline; ) await sleep(100);
  if (!existsSync(lock)) return undefined;
  rmSync(lock, { force: true });
  return lock;
}

/** The administrative directory (`<common dir>/worktrees/<name>`) whose `gitdir` file names `worktree`. */
async function adminDirOf(root: string, worktree: string): Promise<string | undefined> {
  const worktrees = join(await commonGitDir(root), "worktrees");
  const wanted = join(resolve(worktree), ".git");
  let names: string[];
  try {
    names = readdirSync(worktrees);
  } catch {
    return undefined;
  }
  return names
    .map((name) => join(worktrees, name))
    .find((dir) => {
      try {
        return resolve(readFileSync(join(dir, "gitdir"), "utf8").trim()) === wanted;
      } catch {
        return false;
      }
    });
}
