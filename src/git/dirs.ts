import { gitRun, linkedGitDir } from "./repo.js";

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
  return remembered(own, path, async () => linkedGitDir(path) ?? (await gitRun(path, ["rev-parse", "--absolute-git-dir"])).trim());
}

export function forgetGitDir(path: string): void {
  own.delete(path);
}

/** The repository's shared git directory, as seen from the checkout at `root`: asked once. */
export function commonGitDir(root: string): Promise<string> {
  return remembered(common, root, async () => (await gitRun(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim());
}
