import { existsSync } from "node:fs";
import { gitRun, gitTry } from "./repo.js";

export interface WorktreeInfo {
  path: string;
  head: string | undefined;
  /** Short branch name, when one is checked out. */
  branch: string | undefined;
}

export async function listWorktrees(root: string): Promise<WorktreeInfo[]> {
  const out = await gitRun(root, ["worktree", "list", "--porcelain"]);
  const worktrees: WorktreeInfo[] = [];
  for (const block of out.split("\n\n")) {
    const lines = block.split("\n");
    const path = lines.find((line) => line.startsWith("worktree "))?.slice("worktree ".length);
    if (!path) continue;
    const head = lines.find((line) => line.startsWith("HEAD "))?.slice("HEAD ".length);
    const branch = lines.find((line) => line.startsWith("branch "))?.slice("branch refs/heads/".length);
    worktrees.push({ path, head, branch });
  }
  return worktrees;
}

/**
 * A fresh worktree at `path` on `branch`, starting at `start`. A leftover
 * worktree of the factory's own at that path is removed first.
 */
export async function createWorktree(root: string, options: { path: string; branch: string; start: string }): Promise<void> {
  await removeWorktree(root, options.path);
  await gitRun(root, ["worktree", "add", "--quiet", "--force", "-B", options.branch, options.path, options.start]);
}

export async function removeWorktree(root: string, path: string): Promise<void> {
  if (existsSync(path)) await gitTry(root, ["worktree", "remove", "--force", "--force", path]);
  await gitTry(root, ["worktree", "prune"]);
}

export async function deleteBranch(root: string, branch: string): Promise<void> {
  await gitTry(root, ["branch", "--quiet", "-D", branch]);
}

/** Stages all changes except `exclude` pathspecs and commits; returns the new HEAD (unchanged when nothing was staged). */
export async function commitWorktree(worktree: string, message: string, exclude: readonly string[] = []): Promise<string> {
  await gitRun(worktree, ["add", "--all", "--", ".", ...exclude.map((path) => `:(exclude,top)${path}`)]);
  const staged = await gitTry(worktree, ["diff", "--cached", "--quiet"]);
  if (!staged.ok) await gitRun(worktree, ["commit", "--quiet", "--no-verify", "-m", message], { identity: true });
  return (await gitRun(worktree, ["rev-parse", "HEAD"])).trim();
}

export interface StatusEntry {
  code: string;
  path: string;
}

/** Tracked changes and untracked files (not ignored ones). */
export async function worktreeStatus(worktree: string): Promise<StatusEntry[]> {
  const out = await gitRun(worktree, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  const entries: StatusEntry[] = [];
  const records = out.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? "";
    if (record.length < 4) continue;
    const code = record.slice(0, 2);
    entries.push({ code, path: record.slice(3) });
    if (code.startsWith("R") || code.startsWith("C")) i++; // the rename's source follows
  }
  return entries;
}
