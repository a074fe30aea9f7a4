import { lstatSync, readFileSync, realpathSync, type Stats } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";

/**
 * A linked worktree's `.git` is a file, `gitdir: <path>`, that the agent can
 * rewrite: pointed at a git directory it made (with a config of its own:
 * filters, a pager, hooks), the factory's unsandboxed git would follow it.
 * Before every git call in a worktree, its `.git` file is checked: it must
 * be a plain file naming a directory under some repository's `worktrees/`
 * (never inside the worktree itself) whose `gitdir` file points back at it.
 * Anything else is refused and never followed.
 */
export class GitFileTampered extends Error {}

/** The most a `.git` file holds: `gitdir: ` and a path. */
const MAX_GIT_FILE = 4096;

/**
 * Why a worktree's `.git` file is not the one git wrote, or undefined when it is. `stat` is its lstat;
 * `content` its text; `backPointer` the text of the `gitdir` file in the directory it names (compared
 * with the worktree's `.git`, symbolic links resolved).
 */
export function gitFileProblem(worktree: string, stat: Pick<Stats, "isFile" | "isSymbolicLink" | "size">, content: string, backPointer: string | undefined): string | undefined {
  if (stat.isSymbolicLink()) return "its .git is a symbolic link";
  if (!stat.isFile()) return undefined; // a directory: a checkout of its own, not a linked worktree
  if (stat.size > MAX_GIT_FILE) return `its .git file is ${stat.size} bytes, not a gitdir line`;
  const pointer = /^gitdir: (.+)$/m.exec(content)?.[1]?.trim();
  if (!pointer) return "its .git file names no git directory";
  const dir = resolve(worktree, pointer);
  const inside = relative(worktree, dir);
  if (!inside.startsWith("..") && !isAbsolute(inside)) return `its .git file points inside the worktree (${pointer})`;
  if (basename(dirname(dir)) !== "worktrees") return `its .git file points at ${pointer}, not at a repository's worktree directory`;
  if (backPointer === undefined || !sameFile(resolve(dir, backPointer.trim()), join(worktree, ".git"))) return `its .git file points at ${pointer}, which does not point back at this worktree`;
  return undefined;
}

/** Where the factory keeps its task and scratch worktrees (`…/factory/worktrees/<repo>-<hash>/…` or `/var/tmp/factory-<uid>/worktrees/…`, see loop/context.ts). */
export const FACTORY_WORKTREES = /[\\/]\.?factory(?:-\d+)?[\\/]worktrees[\\/]/;

/**
 * Throws GitFileTampered when `cwd` is one of the factory's worktrees and its `.git` file is not the one git
 * wrote. The user's own checkouts (a linked worktree, a submodule, whose `.git` points into `modules/`) are
 * theirs, never checked.
 */
export function checkGitFile(cwd: string): void {
  if (!FACTORY_WORKTREES.test(`${cwd}/`)) return;
  const file = join(cwd, ".git");
  let stat: Stats;
  try {
    stat = lstatSync(file);
  } catch {
    return; // not the top of a work tree: git finds its own way (the factory calls git at a worktree's top)
  }
  if (stat.isDirectory()) return;
  const content = stat.isFile() && stat.size <= MAX_GIT_FILE ? readFileSync(file, "utf8") : "";
  const pointer = /^gitdir: (.+)$/m.exec(content)?.[1]?.trim();
  const problem = gitFileProblem(cwd, stat, content, pointer ? readBackPointer(resolve(cwd, pointer)) : undefined);
  if (problem) throw new GitFileTampered(`the worktree ${cwd} was tampered with: ${problem}; the factory does not follow it`);
}

/** Whether two paths name the same file, symbolic links in their directories resolved. */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

function readBackPointer(dir: string): string | undefined {
  try {
    const file = join(dir, "gitdir");
    const stat = lstatSync(file);
    return stat.isFile() && stat.size <= MAX_GIT_FILE ? readFileSync(file, "utf8") : undefined;
  } catch {
    return undefined;
  }
}
