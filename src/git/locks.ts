import { existsSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { gitRun } from "./repo.js";
import { listWorktrees } from "./worktree.js";

/**
 * The lock files git leaves when a git command is killed, that a landing on
 * `branch` would need free: the branch's ref lock, packed-refs' lock, and the
 * index lock of the checkout that has the branch. Each blocks every git
 * write there until someone removes it. Absolute paths, oldest first.
 */
export async function leftGitLocks(root: string, branch: string): Promise<string[]> {
  const commonDir = absolute(root, (await gitRun(root, ["rev-parse", "--git-common-dir"])).trim());
  const candidates = [join(commonDir, "refs", "heads", `${branch}.lock`), join(commonDir, "packed-refs.lock")];
  const checkout = (await listWorktrees(root)).find((worktree) => worktree.branch === branch);
  if (checkout) candidates.push(join(absolute(checkout.path, (await gitRun(checkout.path, ["rev-parse", "--git-dir"])).trim()), "index.lock"));
  return candidates.filter((path) => existsSync(path)).sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
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
