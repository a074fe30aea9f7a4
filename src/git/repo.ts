import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { readText } from "../util/read-text.js";
import { checkGitFile } from "./git-file.js";
import { launchGit, ShellUnavailable } from "./launcher.js";
import { allFullIds, atCommits } from "./memo.js";
import { type GitObject, parseAnswer, readObject } from "./object-reader.js";

/**
 * The only module family that talks to git. Every function takes the
 * directory explicitly and returns data, never prints. Calls in one
 * directory run one at a time, in order (a checkout has one index and one
 * HEAD); calls in different worktrees run side by side, as git allows: each
 * worktree has its own index and HEAD, and what they share (objects, refs,
 * packed-refs, the worktree list) git guards with its own lock files and
 * atomic renames. The user's checkout and the shared refs are written from
 * the repository root only, so those writes stay one at a time.
 */
const chains = new Map<string, Promise<unknown>>();

export function serialize<T>(cwd: string, action: () => Promise<T>): Promise<T> {
  const key = resolve(cwd);
  const next = (chains.get(key) ?? Promise.resolve()).then(action, action);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  chains.set(key, settled);
  void settled.then(() => {
    if (chains.get(key) === settled) chains.delete(key);
  });
  return next;
}

/**
 * Every git call the factory makes runs with the repository's hooks and
 * fsmonitor off: an agent can write the shared `.git/config`, and nothing it
 * writes there may run inside the factory's own commits and merges. Nor does
 * it ever recurse into a nested repository or submodule: a repository the
 * agent made inside its worktree has a config of its own (a clean filter, a
 * hook path), which the overrides here do not reach, and git run outside
 * the sandbox would run it as the user.
 */
const HARDENED = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "submodule.recurse=false", "-c", "status.submoduleSummary=false"];

/**
 * Subcommands that compare the work tree and would look inside a nested repository or submodule (running
 * git there, with its config) to see whether it changed: told not to. A diff between two commits reads
 * only objects, and must still show a gitlink, so the scope gate can refuse it.
 */
const COMPARING = new Set(["status", "diff-index", "diff-files"]);

/** Subcommands that run filter drivers (clean on staging and on comparing, smudge on checkout). */
const FILTERING = new Set(["add", "read-tree", "merge", "restore", "checkout", "commit", "status"]);

/**
 * `-c` overrides that switch off every filter driver the configuration
 * declares, so the factory commits the worktree's exact bytes and checks out
 * the tree's exact bytes, whatever `.gitattributes` asks for. The lookup is
 * remembered per exact content of every configuration file git reads here,
 * so an agent that adds a filter anywhere is seen at the next command.
 */
async function filterOverrides(cwd: string): Promise<string[]> {
  const key = configFingerprint(cwd);
  const known = key === undefined ? undefined : filterCache.get(key);
  if (known) return known;
  const result = await spawnGit(cwd, [...HARDENED, "config", "--get-regexp", "^filter\\."]);
  const out = result.ok ? result.out : ""; // no filter configured: `git config --get-regexp` exits 1
  const names = new Set([...out.matchAll(/^filter\.(.+)\.[^.\s]+ /gm)].map((match) => match[1] as string));
  const overrides = [...names].flatMap((name) => ["clean", "smudge", "process"].flatMap((key) => ["-c", `filter.${name}.${key}=`]).concat(["-c", `filter.${name}.required=false`]));
  if (key !== undefined) filterCache.set(key, overrides);
  return overrides;
}

const filterCache = new Map<string, string[]>();

/** Where git looks for its system-wide configuration, depending on how it was built. */
const SYSTEM_CONFIGS = ["/etc/gitconfig", "/usr/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"];

/**
 * A digest of every configuration file git reads in `cwd` (system, global,
 * the repository's, the worktree's), or undefined when that set cannot be
 * known for sure: git's environment variables choose other files, or a file
 * includes another (whose content could change without this one changing).
 * Read synchronously: a handful of small files, where a promise per file
 * cost four thread-pool round trips each before the git call could start.
 */
function configFingerprint(cwd: string): string | undefined {
  if (Object.keys(process.env).some((name) => /^GIT_(CONFIG|DIR$|COMMON_DIR$)/.test(name))) return undefined;
  let gitDir: string | undefined;
  try {
    gitDir = statSync(join(cwd, ".git")).isDirectory() ? join(cwd, ".git") : linkedGitDir(cwd);
  } catch {
    return undefined; // not the top of a work tree: ask git
  }
  if (gitDir === undefined) return undefined;
  const commonDir = resolve(gitDir, readText(join(gitDir, "commondir"))?.trim() || ".");
  const home = process.env.HOME ?? homedir();
  const files = [...SYSTEM_CONFIGS, join(home, ".gitconfig"), join(process.env.XDG_CONFIG_HOME || join(home, ".config"), "git", "config"), join(commonDir, "config"), join(gitDir, "config.worktree")];
  const hash = createHash("sha256");
  // By each file's place in the list, not its path: what git prints depends on the contents alone, so
  // a new worktree of the same repository (another path for config.worktree) asks git again only when a content differs.
  for (const [place, file] of files.entries()) {
    const text = readText(file);
    if (text !== undefined && /\[\s*include/i.test(text)) return undefined;
    hash.update(`${place}\0${text ?? "\u0000missing"}\0`);
  }
  return hash.digest("hex");
}

/**
 * A linked worktree's git directory as its `.git` file names it
 * (`gitdir: <path>`, absolute or relative to the worktree), read without a
 * process; undefined for anything else (a checkout's own `.git` directory,
 * no such file, a directory that is not there, an environment that points
 * git elsewhere): the caller asks git then.
 */
export function linkedGitDir(worktree: string): string | undefined {
  if (process.env.GIT_DIR !== undefined || process.env.GIT_COMMON_DIR !== undefined) return undefined;
  const file = join(worktree, ".git");
  try {
    if (!statSync(file).isFile()) return undefined;
    const pointer = /^gitdir: (.+)$/m.exec(readFileSync(file, "utf8"))?.[1]?.trim();
    if (!pointer) return undefined;
    const dir = resolve(worktree, pointer);
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Identity for commits the factory itself makes (planting, attempts, fixes, merges). */
const FACTORY_IDENTITY = ["-c", "user.name=factory", "-c", "user.email=factory@localhost"];
/** The task branches' working commits are never signed (a passphrase prompt at night would stall the run); the landing commit follows the user's signing setup. */
const NO_SIGNING = ["-c", "commit.gpgsign=false"];
/** A working commit on a task branch does not start `git maintenance run --auto` (two processes per commit); the user's own commands still do. */
const NO_MAINTENANCE = ["-c", "maintenance.auto=false"];

export type GitResult = { ok: true; out: string } | { ok: false; message: string };

export interface GitOptions {
  /** Commit as the factory. */
  identity?: boolean;
  /** With identity: leave signing to the command line and the user's configuration (gpg.format, user.signingkey). */
  signed?: boolean;
  /** Another index file than the worktree's own (GIT_INDEX_FILE): git then locks that file, not the index. */
  indexFile?: string;
}

/**
 * One git process. Every non-zero exit is a failure (the `--quiet` and
 * `--is-ancestor` forms answer only by exit code), reported with what git
 * printed. Started by one of the kept-open shells of launcher.ts (node's own
 * spawn forks the whole node process: a packet costs about forty git
 * processes, and each blocked the event loop 5–8 ms), or by node itself
 * where no shell can start it. Neither execa (about 5 ms of CPU per call)
 * nor simple-git (a fixed 50 ms wait after a command that prints nothing):
 * they were most of what the factory added. stdin is /dev/null.
 */
function spawnGit(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult> {
  if (env) return spawnGitHere(cwd, args, env);
  const launched = launchGit(cwd, args);
  if (!launched) return spawnGitHere(cwd, args);
  return launched.then(
    ({ code, stdout, stderr }) => (code === 0 ? { ok: true, out: stdout } : { ok: false, message: `${stderr}${stdout}`.trim() || `git exited with code ${code}` }),
    (error: Error) => (error instanceof ShellUnavailable ? spawnGitHere(cwd, args) : { ok: false, message: error.message }),
  );
}

/** One git process started by node itself (where no shell starts it, see launcher.ts). */
function spawnGitHere(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((done) => {
    const child = spawn("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"], ...(env ? { env } : {}) });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", (error) => done({ ok: false, message: error.message }));
    child.on("close", (code, signal) => {
      if (code === 0) return done({ ok: true, out: stdout });
      const text = `${stderr}${stdout}`.trim();
      done({ ok: false, message: text || (code !== null ? `git exited with code ${code}` : `git was killed by ${signal}`) });
    });
  });
}

/** Runs `git <args>` in `cwd`; failures come back as data. */
export function gitTry(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  return serialize(cwd, () => runGit(cwd, args, options));
}

/**
 * Runs a git command that writes nothing and takes no lock (its caller
 * passes `--no-optional-locks` where git would refresh the index) beside
 * the directory's other calls instead of after them: for a read at a
 * command's start, before this process writes anything there.
 */
export function gitReadAside(cwd: string, args: string[]): Promise<GitResult> {
  return runGit(cwd, args, {});
}

/**
 * A read of objects only (`ls-tree` of a commit, `diff` between two
 * commits: no index, no work tree). With every one of `commits` a full id,
 * what it reads cannot change, so it never sees another call's step half
 * done: it runs beside the directory's other calls. Otherwise it waits its
 * turn.
 */
export function gitReadObjects(cwd: string, commits: readonly string[], args: string[]): Promise<GitResult> {
  return allFullIds(commits) ? runGit(cwd, args, {}) : gitTry(cwd, args);
}

/**
 * Runs git calls in `cwd` back to back, stopping at the first failure: no
 * other call in that directory runs between them, so nothing in this process
 * sees the state between two steps (a branch moved, its checkout not yet).
 * `before` runs just before its step, `after` just after it succeeded; a
 * step may run in another directory (`cwd`), serialized with this one.
 */
export function gitTryInTurn(cwd: string, steps: readonly { args: string[]; cwd?: string; options?: GitOptions; before?: () => void; after?: () => void }[]): Promise<GitResult[]> {
  return serialize(cwd, async () => {
    const results: GitResult[] = [];
    for (const step of steps) {
      step.before?.();
      const result = await runGit(step.cwd ?? cwd, step.args, step.options ?? {});
      results.push(result);
      if (!result.ok) break;
      step.after?.();
    }
    return results;
  });
}

async function runGit(cwd: string, args: string[], options: GitOptions): Promise<GitResult> {
  checkGitFile(cwd); // a worktree's .git rewritten to point elsewhere is never followed
  const subcommand = args.find((arg, at) => !arg.startsWith("-") && args[at - 1] !== "-c");
  const filters = subcommand && FILTERING.has(subcommand) ? await filterOverrides(cwd) : [];
  const at = subcommand === undefined ? -1 : args.indexOf(subcommand);
  const withArgs = subcommand && COMPARING.has(subcommand) ? [...args.slice(0, at + 1), "--ignore-submodules=all", ...args.slice(at + 1)] : args;
  return spawnGit(
    cwd,
    [
      ...HARDENED,
      ...filters,
      ...(options.identity ? FACTORY_IDENTITY : []),
      ...(options.identity && !options.signed ? NO_SIGNING : []),
      ...(subcommand === "commit" ? NO_MAINTENANCE : []),
      ...withArgs,
    ],
    options.indexFile ? { ...process.env, GIT_INDEX_FILE: options.indexFile } : undefined,
  );
}

/** Runs `git <args>` where failure means a bug or a broken repository: it throws with git's message. */
export async function gitRun(cwd: string, args: string[], options: GitOptions = {}): Promise<string> {
  return orThrow(cwd, await gitTry(cwd, args, options), args);
}

/** What git printed, or an error with git's message. */
export function orThrow(cwd: string, result: GitResult, args: readonly string[]): string {
  if (!result.ok) throw new Error(`git ${args.join(" ")} (in ${cwd}) failed: ${result.message}`);
  return result.out;
}

/** The top of the work tree containing `cwd`, or undefined outside a repository. */
export async function findRepoRoot(cwd: string): Promise<string | undefined> {
  const result = await gitTry(cwd, ["rev-parse", "--show-toplevel"]);
  return result.ok ? result.out.trim() || undefined : undefined;
}

/** The branch checked out in `cwd`, or undefined on a detached HEAD. */
export async function currentBranch(cwd: string): Promise<string | undefined> {
  const result = await gitTry(cwd, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  return result.ok ? result.out.trim() || undefined : undefined;
}

/** The full sha of a commit-ish, or undefined when it does not name a commit. */
export async function resolveCommit(cwd: string, ref: string): Promise<string | undefined> {
  const object = await batchRead(cwd, `${ref}^{commit}`);
  if (object !== "unread") return object?.type === "commit" ? object.oid : undefined;
  const result = await gitTry(cwd, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  return result.ok ? result.out.trim() || undefined : undefined;
}

/** The id of the object `name` names (`<rev>:<path>` for a tree or a file), or undefined when there is none. */
export async function objectId(cwd: string, name: string): Promise<string | undefined> {
  const object = await batchRead(cwd, name);
  if (object !== "unread") return object?.oid;
  const result = await gitTry(cwd, ["rev-parse", "--verify", "--quiet", name]);
  return result.ok ? result.out.trim() || undefined : undefined;
}

/**
 * `name` read through the directory's kept-open `cat-file --batch`, in turn
 * with the directory's other git calls; "unread" when the reader cannot
 * answer (a name it cannot carry, a reader that failed), for the caller to
 * ask git the usual way.
 */
async function batchRead(cwd: string, name: string): Promise<GitObject | undefined | "unread"> {
  return serialize(cwd, () => readObject(cwd, HARDENED, name).catch(() => "unread" as const));
}

export async function treeOf(cwd: string, commit: string): Promise<string> {
  const tree = await objectId(cwd, `${commit}^{tree}`);
  if (!tree) throw new Error(`git: ${commit} names no commit with a tree (in ${cwd})`);
  return tree;
}

/** The commit checked out in `dir` (a worktree or the checkout); throws when HEAD names none. */
export async function headOf(dir: string): Promise<string> {
  const head = await resolveCommit(dir, "HEAD");
  if (!head) throw new Error(`git: HEAD names no commit (in ${dir})`);
  return head;
}

/** Paths of the files under `dir` in the tree of `ref` (recursive), relative to the repository root. */
export async function listTreeFiles(cwd: string, ref: string, dir: string): Promise<string[]> {
  const out = await gitRun(cwd, ["ls-tree", "-r", "-z", "--name-only", ref, "--", dir]);
  return out.split("\0").filter((path) => path !== "");
}

export interface TreeEntry {
  mode: string;
  sha: string;
  /** Bytes of a blob; absent for a submodule. */
  size?: number;
}

/** Every file of a commit's tree (or only those under `dir`) with its mode and blob sha. */
export async function listTree(cwd: string, ref: string, dir?: string): Promise<Map<string, TreeEntry>> {
  const args = ["ls-tree", "-r", "-l", "-z", "--full-tree", ref, ...(dir ? ["--", dir] : [])];
  const out = orThrow(cwd, await gitReadObjects(cwd, [ref], args), args);
  const entries = new Map<string, TreeEntry>();
  for (const record of out.split("\0")) {
    const match = /^(\d+) \w+ ([0-9a-f]+) +(\d+|-)\t(.*)$/s.exec(record);
    if (match) entries.set(match[4] ?? "", { mode: match[1] ?? "", sha: match[2] ?? "", ...(match[3] === "-" ? {} : { size: Number(match[3]) }) });
  }
  return entries;
}

/** The content of `path` at `ref` as UTF-8 text, or undefined when it does not exist there. */
export async function readFileAt(cwd: string, ref: string, path: string): Promise<string | undefined> {
  return atCommits(cwd, [ref], ["cat-file", path], async () => {
    const object = await batchRead(cwd, `${ref}:${path}`);
    if (object !== "unread") return object?.type === "blob" ? object.bytes.toString("utf8") : undefined;
    const result = await gitTry(cwd, ["cat-file", "blob", `${ref}:${path}`]);
    return result.ok ? result.out : undefined;
  });
}

/**
 * Many blobs by object id in one process (`git cat-file --batch`), in the
 * order asked; undefined for an id that is not a blob. Asked by id, not by
 * `ref:path`: git finds a path by scanning its tree, so asking for every
 * file of a large directory by path takes time that grows with its square.
 */
export async function readBlobs(cwd: string, shas: readonly string[]): Promise<(string | undefined)[]> {
  return (await readBlobBytes(cwd, shas)).map((bytes) => bytes?.toString("utf8"));
}

/**
 * As `readBlobs`, the exact bytes (binary files too): asked of the
 * directory's kept-open reader, all at once; from a `cat-file --batch` of
 * their own when the reader cannot answer.
 */
export function readBlobBytes(cwd: string, shas: readonly string[]): Promise<(Buffer | undefined)[]> {
  if (shas.length === 0) return Promise.resolve([]);
  return serialize(cwd, async () => {
    const objects = await Promise.all(shas.map((sha) => readObject(cwd, HARDENED, sha))).catch(() => undefined);
    if (objects) return objects.map((object) => (object?.type === "blob" ? object.bytes : undefined));
    const stdout = await gitWithInput(cwd, [...HARDENED, "cat-file", "--batch"], `${shas.join("\n")}\n`);
    return parseBatch(stdout, shas.length);
  });
}

/** Which of `shas` this repository lacks as commits: one `cat-file --batch-check` for all. */
export async function missingCommits(cwd: string, shas: readonly string[]): Promise<string[]> {
  if (shas.length === 0) return [];
  const out = (await gitWithInput(cwd, [...HARDENED, "cat-file", "--batch-check=%(objectname) %(objecttype)"], `${shas.map((sha) => `${sha}^{commit}`).join("\n")}\n`)).toString("utf8");
  const answers = out.split("\n");
  return shas.filter((_, at) => !(answers[at] ?? "").endsWith(" commit"));
}

/** `git <args>` with `input` on stdin; its stdout as bytes, gathered once at the end. */
function gitWithInput(cwd: string, args: string[], input: string): Promise<Buffer> {
  checkGitFile(cwd);
  return new Promise((done, fail) => {
    const child = spawn("git", args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code === 0) done(Buffer.concat(out));
      else fail(new Error(`git ${args.join(" ")} (in ${cwd}) exited ${code}: ${Buffer.concat(err).toString("utf8").trim()}`));
    });
    child.stdin.on("error", () => undefined); // an early exit closes the pipe; the exit code says why
    child.stdin.end(input);
  });
}

/** Pure: `git cat-file --batch` output (`<sha> <type> <size>\n<bytes>\n`, or `<name> missing\n`) as each blob's bytes. */
export function parseBatch(out: Buffer, count: number): (Buffer | undefined)[] {
  const blobs: (Buffer | undefined)[] = [];
  let rest = out;
  for (let index = 0; index < count; index++) {
    const answer = parseAnswer(rest);
    if ("need" in answer) throw new Error("git cat-file --batch ended early");
    blobs.push(answer.object?.type === "blob" ? answer.object.bytes : undefined); // a missing path or a tree is not a file
    rest = rest.subarray(answer.length);
  }
  return blobs;
}

/** Creates a repository with `branch` checked out and a local identity (for the demo and tests). */
export async function initRepository(dir: string, options: { branch: string; name: string; email: string }): Promise<void> {
  await gitRun(dir, ["init", "--quiet", "--initial-branch", options.branch]);
  await gitRun(dir, ["config", "user.name", options.name]);
  await gitRun(dir, ["config", "user.email", options.email]);
  await gitRun(dir, ["config", "commit.gpgsign", "false"]);
  await gitRun(dir, ["config", "gc.auto", "0"]);
}

/** Stages everything in the work tree and commits it; returns the new commit's sha. */
export async function commitAll(dir: string, message: string): Promise<string> {
  await gitRun(dir, ["add", "--all"]);
  await gitRun(dir, ["commit", "--quiet", "--no-verify", "-m", message]);
  return headOf(dir);
}

/** The configured user name (for approvals), falling back to the OS user. */
export async function gitUserName(cwd: string): Promise<string | undefined> {
  const result = await gitTry(cwd, ["config", "user.name"]);
  return result.ok ? result.out.trim() || undefined : undefined;
}

/**
 * Whether the user's configuration asks for signed commits
 * (`commit.gpgsign`): plumbing like commit-tree does not read it itself.
 * Remembered, like the filter lookup, per exact content of every
 * configuration file git reads there: a user who turns signing on or off
 * during a night is seen at the next landing.
 */
export async function wantsSignedCommits(root: string): Promise<boolean> {
  const key = configFingerprint(root);
  const known = key === undefined ? undefined : signingCache.get(key);
  if (known !== undefined) return known;
  const result = await gitTry(root, ["config", "--type=bool", "--get", "commit.gpgsign"]);
  const wanted = result.ok && result.out.trim() === "true";
  if (key !== undefined) signingCache.set(key, wanted);
  return wanted;
}

const signingCache = new Map<string, boolean>();

/** What a person is told when git cannot sign the landing's commit: git's own words, and that signing is theirs to change. */
export function signingProblem(message: string): string {
  const said = message.trim().split("\n").filter(Boolean).slice(-3).join(" / ");
  return `commit.gpgsign is set, but git cannot sign a commit here (${said}): make the signing key usable (user.signingkey, gpg.format, the agent holding the key), or unset commit.gpgsign yourself; the factory never turns signing off`;
}
