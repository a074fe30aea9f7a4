import { simpleGit, type SimpleGit } from "simple-git";

/**
 * The only module that talks to git. Every function takes the repository
 * directory explicitly and returns data, never prints.
 */
function git(cwd: string): SimpleGit {
  return simpleGit({ baseDir: cwd, maxConcurrentProcesses: 1, trimmed: false });
}

/** The top of the work tree containing `cwd`, or undefined outside a repository. */
export async function findRepoRoot(cwd: string): Promise<string | undefined> {
  try {
    const out = await git(cwd).revparse(["--show-toplevel"]);
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The branch checked out in `cwd`, or undefined on a detached HEAD. */
export async function currentBranch(cwd: string): Promise<string | undefined> {
  try {
    const out = await git(cwd).raw(["symbolic-ref", "--quiet", "--short", "HEAD"]);
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The full sha of a commit-ish, or undefined when it does not name a commit. */
export async function resolveCommit(cwd: string, ref: string): Promise<string | undefined> {
  try {
    const out = await git(cwd).raw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Paths of the files under `dir` in the tree of `ref` (recursive), relative to the repository root. */
export async function listTreeFiles(cwd: string, ref: string, dir: string): Promise<string[]> {
  const out = await git(cwd).raw(["ls-tree", "-r", "-z", "--name-only", ref, "--", dir]);
  return out.split("\0").filter((path) => path !== "");
}

/** The content of `path` at `ref` as UTF-8 text, or undefined when it does not exist there. */
export async function readFileAt(cwd: string, ref: string, path: string): Promise<string | undefined> {
  try {
    return await git(cwd).show([`${ref}:${path}`]);
  } catch {
    return undefined;
  }
}

/** Whether any of git's ignore rules covers `path`. */
export async function isIgnored(cwd: string, path: string): Promise<boolean> {
  try {
    await git(cwd).raw(["check-ignore", "-q", "--no-index", path]);
    return true;
  } catch {
    return false;
  }
}

/** Creates a repository with `branch` checked out and a local identity (for the demo and tests). */
export async function initRepository(dir: string, options: { branch: string; name: string; email: string }): Promise<void> {
  const repo = git(dir);
  await repo.raw(["init", "--quiet", "--initial-branch", options.branch]);
  await repo.addConfig("user.name", options.name);
  await repo.addConfig("user.email", options.email);
  await repo.addConfig("commit.gpgsign", "false");
  await repo.addConfig("gc.auto", "0");
}

/** Stages everything in the work tree and commits it; returns the new commit's sha. */
export async function commitAll(dir: string, message: string): Promise<string> {
  const repo = git(dir);
  await repo.raw(["add", "--all"]);
  await repo.raw(["commit", "--quiet", "--no-verify", "-m", message]);
  return (await repo.revparse(["HEAD"])).trim();
}
