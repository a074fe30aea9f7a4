import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { gitRun } from "./repo.js";

const own = new Map<string, Promise<string>>();
const common = new Map<string, Promise<string>>();

function remembered(memo: Map<string, Promise<string>>, key: string, ask: () => Promise<string>): Promise<string> {
  let answer = memo.get(key);
  if (!answer) {
    answer = ask();
    answer.catch(() => memo.delete(key));
    memo.set(key, answer);
  }
  return answer;
}

/**
 * The git directory of the checkout or worktree at `path` (a linked
 * worktree's own): fixed while it exists, so asked once. Whoever creates or
 * removes a worktree at `path` calls forgetGitDir.
 */
export function gitDirOf(path: string): Promise<string> {
  return remembered(own, path, async () => pointedGitDir(path) ?? (await gitRun(path, ["rev-parse", "--absolute-git-dir"])).trim());
}

/**
 * A linked worktree's git directory as its `.git` file names it
 * (`gitdir: <path>`, absolute or relative to the worktree), read without a
 * process; undefined for anything else (a checkout's own `.git` directory,
 * no such file, an environment that points git elsewhere): git is asked then.
 */
function pointedGitDir(path: string): string | undefined {
  if (process.env.GIT_DIR !== undefined || process.env.GIT_COMMON_DIR !== undefined) return undefined;
  const file = join(path, ".git");
  try {
    if (!statSync(file).isFile()) return undefined;
    const pointer = /^gitdir: (.+)$/m.exec(readFileSync(file, "utf8"))?.[1]?.trim();
    if (!pointer) return undefined;
    const dir = resolve(path, pointer);
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

export function forgetGitDir(path: string): void {
  own.delete(path);
}

/** The repository's shared git directory, as seen from the checkout at `root`: asked once. */
export function commonGitDir(root: string): Promise<string> {
  return remembered(common, root, async () => (await gitRun(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim());
}
