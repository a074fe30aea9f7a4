import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_PATTERNS } from "./cache-patterns.js";
import { DEPENDENCY_PATTERNS, recordDependencies, recordedDependencies } from "./dependency-dirs.js";
import { forgetGitDir, gitDirOf } from "./dirs.js";
import { indexGitlinks, nestedRepositories } from "./nested.js";
import { closeObjectReader } from "./object-reader.js";
import { gitRun, gitTry, headOf, orThrow } from "./repo.js";
import { parseStatusV2 } from "./status.js";

export { DEPENDENCY_PATTERNS } from "./dependency-dirs.js";

/** Pathspecs that leave the cache patterns out of `add` and `status`. */
function cacheExcludes(): string[] {
  return CACHE_PATTERNS.flatMap((pattern) => [`:(exclude,glob)**/${pattern}`, `:(exclude,glob)**/${pattern}/**`]);
}

/** Directories a task worktree does not check out: the queue and every packet's planted files. */
const HIDDEN = ["packets/"];

/**
 * Worktree-updating git commands run with sparse checkout on, so the hidden
 * paths stay out of the worktree (their index entries keep skip-worktree).
 */
const SPARSE = ["-c", "core.sparseCheckout=true"];

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
 * A fresh worktree at `path` on `branch` (detached without one), starting at
 * `start`, as a sparse checkout without `packets/`: no other packet's planted
 * files or `.toml`s for a test runner to collect or an agent to read. The
 * commits still carry `packets/` unchanged. A leftover worktree of the
 * factory's own at that path is removed first; anything else there (a plain
 * directory a killed run left) is moved aside, never deleted, and its new
 * path returned so the caller can say so. Another worktree with `branch`
 * checked out (the packet's earlier one, kept where the worktrees went
 * before: another cache directory, another user's) keeps its files, detached
 * from the branch at the commit it had; its path is returned too.
 */
export async function createWorktree(root: string, options: { path: string; branch?: string; start: string }): Promise<{ movedAside?: string; detached?: string }> {
  if (existsSync(options.path)) await removeWorktree(root, options.path);
  const detached = options.branch ? await freeBranch(root, options.branch, options.path) : undefined;
  let movedAside: string | undefined;
  if (existsSync(options.path)) {
    movedAside = `${options.path}.orphan-${new Date().toISOString().replaceAll(":", "-")}`;
    renameSync(options.path, movedAside);
  }
  const target = options.branch ? ["-B", options.branch] : ["--detach"];
  const add = ["worktree", "add", "--quiet", "--force", "--no-checkout", ...target, options.path, options.start];
  // A registration whose directory is gone (deleted by hand, a crash) refuses the add: pruned, then added again.
  if (!(await gitTry(root, add)).ok) {
    await gitTry(root, ["worktree", "prune"]);
    await gitRun(root, add);
  }
  forgetGitDir(options.path);
  closeObjectReader(options.path);
  // The sparse-checkout file is per worktree ($GIT_DIR/info of the linked worktree), so the user's checkout is unaffected.
  const gitDir = await gitDirOf(options.path);
  mkdirSync(join(gitDir, "info"), { recursive: true });
  writeFileSync(join(gitDir, "info", "sparse-checkout"), ["/*", ...HIDDEN.map((dir) => `!/${dir}`), ""].join("\n"));
  await gitRun(options.path, [...SPARSE, "read-tree", "-mu", "HEAD"]);
  await recordDependencies(options.path); // none yet: only the factory's own steps add to it
  return { ...(movedAside ? { movedAside } : {}), ...(detached ? { detached } : {}) };
}

/** Detaches `branch` in the other worktree that has it checked out (files and commit kept), so it can be checked out at `path`; that worktree's path. */
async function freeBranch(root: string, branch: string, path: string): Promise<string | undefined> {
  const holder = (await listWorktrees(root)).find((worktree) => worktree.branch === branch && worktree.path !== path);
  if (!holder) return undefined;
  // Registered, its directory gone: pruning frees the branch.
  if (!existsSync(holder.path)) {
    await gitTry(root, ["worktree", "prune"]);
    return undefined;
  }
  await gitRun(holder.path, ["checkout", "--quiet", "--detach"]);
  return holder.path;
}

/**
 * Makes the worktree hold exactly its HEAD commit plus the dependency
 * directories the factory's own steps made (recorded by recordDependencies):
 * every other file, ignored or not (a conftest hidden by a self-ignoring
 * .gitignore, stale bytecode, leftovers, a `.tox/` or `node_modules/` the
 * implementer made), is removed, so the gates judge the commit that lands.
 */
export async function reduceToCommit(worktree: string): Promise<void> {
  const recorded = await recordedDependencies(worktree);
  // A worktree an older version made has no record: its dependency directories are kept, as that version did.
  const keep = recorded ? recorded.map((dir) => `/${dir.split("/").map(escapeGlob).join("/")}`) : DEPENDENCY_PATTERNS;
  await resetWorktree(worktree, { removeIgnored: true, keep });
}

/** A path segment as a literal exclude pattern for `git clean -e`. */
function escapeGlob(segment: string): string {
  return segment.replace(/[*?[\\!#]/g, (character) => `\\${character}`);
}

/** Moves the worktree's HEAD to `commit` and makes it hold exactly that commit (plus the dependency directories). */
export async function resetWorktreeTo(worktree: string, commit: string): Promise<void> {
  await gitRun(worktree, [...SPARSE, "reset", "--quiet", "--hard", commit]);
  await reduceToCommit(worktree);
}

/** Puts `paths` into the worktree (and its index) as `commit` has them; reduceToCommit undoes it. */
export async function checkoutPathsFrom(worktree: string, commit: string, paths: readonly string[]): Promise<void> {
  for (let start = 0; start < paths.length; start += 200) {
    await gitRun(worktree, ["--literal-pathspecs", ...SPARSE, "checkout", commit, "--", ...paths.slice(start, start + 200)]);
  }
}

/** `git merge` inside a task worktree, keeping the hidden paths out of it. */
export function mergeInWorktree(worktree: string, args: string[]): ReturnType<typeof gitTry> {
  return gitTry(worktree, [...SPARSE, "merge", ...args], { identity: true });
}

/**
 * Brings the change `from..commit` (another attempt's work, squashed) into
 * the worktree as uncommitted changes, merged three-way onto its HEAD.
 * False, with the worktree back at its HEAD, when it does not apply or the
 * commits are gone.
 */
export async function carryWork(root: string, worktree: string, work: { from: string; commit: string }): Promise<boolean> {
  const squashed = await gitTry(root, ["commit-tree", `${work.commit}^{tree}`, "-p", work.from, "-m", "factory: work carried into a retry"], { identity: true });
  if (!squashed.ok) return false;
  const picked = await gitTry(worktree, [...SPARSE, "cherry-pick", "--no-commit", squashed.out.trim()], { identity: true });
  if (picked.ok) return true;
  await gitTry(worktree, ["cherry-pick", "--quit"]);
  await restoreWorktree(worktree);
  return false;
}

/**
 * Puts the worktree back to its HEAD: tracked files restored, untracked ones
 * removed, except git-ignored files and the cache patterns (an install's
 * node_modules stays). What install, the baseline or the planted check left
 * is therefore never mistaken for the agent's work.
 */
export function restoreWorktree(worktree: string): Promise<void> {
  return resetWorktree(worktree, { removeIgnored: false, keep: CACHE_PATTERNS });
}

/** Every file in the worktree that git does not track, ignored ones included, outside the dependency directories. */
export async function untrackedFiles(worktree: string): Promise<string[]> {
  const out = await gitRun(worktree, ["ls-files", "-z", "--others", ...DEPENDENCY_PATTERNS.flatMap((pattern) => ["-x", pattern])]);
  return out.split("\0").filter(Boolean);
}

/** Tracked files (and the index) back to HEAD's content; untracked files are left. */
export async function restoreTracked(worktree: string): Promise<void> {
  await gitRun(worktree, [...SPARSE, "restore", "--source=HEAD", "--staged", "--worktree", "--", "."]);
}

async function resetWorktree(worktree: string, options: { removeIgnored: boolean; keep: readonly string[] }): Promise<void> {
  await restoreTracked(worktree);
  // -x: ignored files go too; -e patterns are kept either way.
  await gitRun(worktree, ["clean", options.removeIgnored ? "-ffdxq" : "-fdq", ...options.keep.flatMap((pattern) => ["-e", pattern])]);
}

export async function removeWorktree(root: string, path: string): Promise<void> {
  forgetGitDir(path);
  closeObjectReader(path);
  // A removal that worked leaves nothing to prune; a missing directory or a failed removal may leave a registration.
  if (existsSync(path) && (await gitTry(root, ["worktree", "remove", "--force", "--force", path])).ok) return;
  // A .git file rewritten inside the worktree fails git's validation: repaired from the repository's side
  // (git reads only the pointer, runs nothing of it), then removed.
  if (existsSync(path) && (await gitTry(root, ["worktree", "repair", path])).ok && (await gitTry(root, ["worktree", "remove", "--force", "--force", path])).ok) return;
  await gitTry(root, ["worktree", "prune"]);
}

export async function deleteBranch(root: string, branch: string): Promise<void> {
  await gitTry(root, ["branch", "--quiet", "-D", branch]);
}

/**
 * Stages all changes except `exclude` pathspecs and the cache patterns and
 * commits; returns the new HEAD (unchanged when nothing was staged).
 */
export async function commitWorktree(worktree: string, message: string, exclude: readonly string[] = []): Promise<string> {
  // Nested repositories and gitlinks are never staged: git add looks inside one (running git there, with its
  // own config: a filter of the agent's, as the user). The scope gate refuses an attempt that made one.
  const nested = [...nestedRepositories(worktree), ...(await indexGitlinks(worktree))].map((path) => `:(exclude,top,literal)${path}`);
  await gitRun(worktree, ["add", "--all", "--", ".", ...cacheExcludes(), ...exclude.map((path) => `:(exclude,top)${path}`), ...nested]);
  return commitStaged(worktree, message);
}

/** Stages exactly `paths` (even where .gitignore names them) and commits them. */
export async function commitPaths(worktree: string, paths: readonly string[], message: string): Promise<string> {
  await gitRun(worktree, ["add", "--force", "--", ...paths.map((path) => `:(literal,top)${path}`)]);
  return commitStaged(worktree, message);
}

/**
 * Commits what is staged; with nothing staged, HEAD stays. The commit is
 * tried first (one process where something is staged, as it usually is);
 * only when it fails is the index asked whether that was for want of
 * changes, and any other failure is thrown with git's message.
 */
async function commitStaged(worktree: string, message: string): Promise<string> {
  const args = ["commit", "--quiet", "--no-verify", "-m", message];
  const committed = await gitTry(worktree, args, { identity: true });
  if (!committed.ok && !(await gitTry(worktree, ["diff", "--no-ext-diff", "--cached", "--quiet"])).ok) orThrow(worktree, committed, args);
  return headOf(worktree);
}

export interface StatusEntry {
  code: string;
  path: string;
}

/** Tracked changes and untracked files (not ignored ones, and in a task worktree not the cache patterns). */
export async function worktreeStatus(worktree: string, options: { task?: boolean } = {}): Promise<StatusEntry[]> {
  return (await worktreeState(worktree, options)).entries;
}

/** The commit the worktree is at, and its changes as `worktreeStatus` gives them: one git process. */
export async function worktreeState(worktree: string, options: { task?: boolean } = {}): Promise<{ head: string; entries: StatusEntry[] }> {
  const out = await gitRun(worktree, ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", ...(options.task ? ["--", ".", ...cacheExcludes()] : [])]);
  const status = parseStatusV2(out);
  return { head: status.oid ?? "", entries: status.entries.map(({ code, path }) => ({ code, path })) };
}

/** Puts `paths` back as HEAD has them: restored when tracked there, removed when not. */
export async function discardPaths(worktree: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    const tracked = await gitTry(worktree, ["cat-file", "-e", `HEAD:${path}`]);
    if (tracked.ok) await gitRun(worktree, ["checkout", "HEAD", "--", `:(literal,top)${path}`]);
    else rmSync(join(worktree, path), { force: true });
  }
}
