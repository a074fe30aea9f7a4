import { createHash } from "node:crypto";
import { copyFileSync, existsSync, fstatSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, type Stats, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { commonGitDir, gitDirOf } from "../git/dirs.js";
import { HELD_REFS, LANDING_REFS } from "../git/held-refs.js";
import { gitReadAside, gitRun, gitTry } from "../git/repo.js";
import { parseStatusV2 } from "../git/status.js";
import { checkoutMoves } from "../ledger/checkout-moves.js";
import { HIDDEN_STATE } from "../process/sandbox.js";

/** A description of what is fingerprinted (".git/config", "ref refs/tags/v1", "~/.gitconfig") → a hash of what is there. */
export type Fingerprint = Map<string, string>;

/**
 * Where the places an agent, or the code it wrote, must never change are.
 * Each of them can make later git commands (the factory's, or the user's
 * own) run the agent's code or see a different tree, or change what later
 * gate runs execute.
 */
export interface Watched {
  root: string;
  worktree: string;
  /** The target branch: it moves only by the factory's own landings. */
  target: string;
  home: string;
}

/**
 * Paths under HOME that change what later runs execute: shims on PATH, user site-packages, git's own
 * configuration, and the shell's start-up files and SSH keys (a line appended there runs at the user's
 * next login, or lets someone in).
 */
export const WATCHED_HOME = [".local/bin", ".local/lib", ".gitconfig", ".config/git", ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".config/fish", ".ssh"];
const TARGET = (branch: string) => `branch ${branch}`;

/**
 * Fingerprints the repository's git configuration, hooks and `info/`, the
 * task worktree's own config, every ref but the task branches, the user's
 * checkout (which branch, its changes and their content, skip-worktree and
 * assume-unchanged flags) and the watched places in HOME.
 */
export async function fingerprintOutside(watched: Watched): Promise<Fingerprint> {
  const { common, own } = await gitDirs(watched);
  const fingerprint: Fingerprint = new Map();
  const add = (label: (path: string) => string, path: string, content: boolean): void => {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      return;
    }
    if (stat.isSymbolicLink()) fingerprint.set(label(path), `link ${readlinkSync(path)}`);
    else if (stat.isDirectory()) for (const entry of readdirSync(path)) add(label, join(path, entry), content);
    else fingerprint.set(label(path), content ? `${stat.mode.toString(8)} ${hashFile(path)}` : `${stat.mode.toString(8)} ${stat.size} ${stat.mtimeMs}`);
  };
  const inGit = (path: string) => `.git/${relative(common, path) || "."}`;
  for (const path of ["config", "config.worktree", "hooks", "info"]) add(inGit, join(common, path), true);
  // `git gc` writes info/refs (update-server-info), a listing for dumb transports that nothing local reads.
  fingerprint.delete(".git/info/refs");
  add(inGit, join(own, "config.worktree"), true);
  // Large user site-packages are compared by size and time, not read.
  for (const path of WATCHED_HOME) add((found) => `~/${relative(watched.home, found)}`, join(watched.home, path), false);

  // The refs are read beside the checkout's status (a read that takes no lock), not after it.
  const [refs, checkout] = await Promise.all([gitReadAside(watched.root, ["for-each-ref", "--format=%(refname)%00%(objectname)"]), checkoutState(watched.root)]);
  if (!refs.ok) throw new Error(`git for-each-ref (in ${watched.root}) failed: ${refs.message}`);
  for (const line of refs.out.split("\n").filter(Boolean)) {
    const [name = "", object = ""] = line.split("\0");
    if (name.startsWith("refs/heads/factory/") || name.startsWith(HELD_REFS) || name.startsWith(LANDING_REFS)) continue; // the task branches, held work and candidates to land are the factory's to move
    fingerprint.set(name === `refs/heads/${watched.target}` ? TARGET(watched.target) : `ref ${name}`, object);
  }
  for (const [label, value] of checkout) fingerprint.set(label, value);
  return fingerprint;
}

/** Where the repository's shared git directory and the worktree's own are: asked once each. */
async function gitDirs(watched: Watched): Promise<{ common: string; own: string }> {
  return { common: await commonGitDir(watched.root), own: await gitDirOf(watched.worktree) };
}

/** How many times a status is taken while a landing moves the checkout (100 ms apart): a landing stuck longer is seen as it is. */
const MOVE_TRIES = 50;

/** The user's checkout as the tripwire sees it: which HEAD, every change and its content, and hidden-change flags. */
async function checkoutState(root: string): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  const exclude = HIDDEN_STATE.map((dir) => `:(exclude)${dir}`);
  // One status gives the branch (or the detached commit) and every change. A landing by another
  // process moves the branch, then the checkout: a status between the two would see the landed
  // files as changes, so it is taken again until no move was under way or ended while it ran.
  let status = parseStatusV2("");
  for (let tries = 1; ; tries++) {
    const before = checkoutMoves(root);
    status = parseStatusV2(await gitRun(root, ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=all", "--", ".", ...exclude]));
    const after = checkoutMoves(root);
    if ((!before.moving && !after.moving && before.ended === after.ended) || tries >= MOVE_TRIES) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ownOutputs = openOutputs();
  for (const change of status.entries) {
    const full = join(root, change.path);
    if (ownOutputs.some((output) => sameFile(output, full))) continue; // `factory run > night.log`, `nohup factory run`
    state.set(
      `a change to ${change.path} in your checkout`,
      `${change.code}${change.from === undefined ? "" : ` from ${change.from}`} ${existsSync(full) && lstatSync(full).isFile() ? hashFile(full) : "-"}`,
    );
  }
  state.set("your checkout's HEAD", status.head === "(detached)" ? (status.oid ?? "") : `refs/heads/${status.head ?? ""}`);
  for (const [path, flag] of await hidingFlags(root)) state.set(`a flag hiding changes to ${path} in your checkout`, flag);
  return state;
}

/** Where this process's stdout and stderr go, when they are files: the user may redirect them into the checkout. */
function openOutputs(): Stats[] {
  const outputs: Stats[] = [];
  for (const fd of [1, 2]) {
    try {
      const stat = fstatSync(fd);
      if (stat.isFile()) outputs.push(stat);
    } catch {
      // closed: nothing written there
    }
  }
  return outputs;
}

function sameFile(output: Stats, path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.ino === output.ino && stat.dev === output.dev;
  } catch {
    return false;
  }
}

const flagsSeen = new Map<string, { index: string; flags: [string, string][] }>();

/**
 * The checkout's entries flagged assume-unchanged (lowercase tags) or
 * skip-worktree (S): both hide edits from git status. The flags live in the
 * index file, so while its bytes are the same as when they were last listed,
 * the listing stands (no git process).
 */
async function hidingFlags(root: string): Promise<[string, string][]> {
  const index = process.env.GIT_INDEX_FILE ? undefined : indexHash(join(await gitDirOf(root), "index"));
  const seen = flagsSeen.get(root);
  if (index !== undefined && seen?.index === index) return seen.flags;
  const flags: [string, string][] = [];
  for (const entry of (await gitRun(root, ["ls-files", "-v", "-z"])).split("\0").filter(Boolean)) {
    if (/^[a-zS]/.test(entry)) flags.push([entry.slice(2), entry[0] ?? ""]);
  }
  if (index !== undefined) flagsSeen.set(root, { index, flags });
  return flags;
}

function indexHash(path: string): string | undefined {
  try {
    return hashFile(path);
  } catch {
    return undefined; // no index yet: list every time
  }
}

function hashFile(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Pure: what differs between two fingerprints, as "<what> changed|appeared|disappeared", sorted. */
export function trippedBy(before: Fingerprint, after: Fingerprint): string[] {
  const changes: string[] = [];
  for (const [what, hash] of after) {
    const was = before.get(what);
    if (was === undefined) changes.push(`${what} appeared`);
    else if (was !== hash) changes.push(`${what} changed`);
  }
  for (const what of before.keys()) if (!after.has(what)) changes.push(`${what} disappeared`);
  return changes.sort();
}

/**
 * What changed outside the worktree since `before`, and the fingerprint now.
 * The target branch may have moved by the factory's own landings of other
 * packets (each carries its Factory-Packet trailer, on top of the old tip);
 * any other move of it is a change.
 */
export async function changedOutside(watched: Watched, before: Fingerprint): Promise<{ changes: string[]; after: Fingerprint }> {
  const after = await fingerprintOutside(watched);
  const compared = new Map(after);
  // The target, and a remote's tracking refs, moved by landings only (this worker's, or another's fetched): the factory's own moves.
  const moved = [...after.keys()].filter((label) => label === TARGET(watched.target) || label.startsWith("ref refs/remotes/"));
  for (const label of moved) {
    const [from, to] = [before.get(label), after.get(label)];
    if (from && to && from !== to && (await onlyLandings(watched.root, from, to))) compared.set(label, from);
  }
  return { changes: trippedBy(before, compared), after };
}

/**
 * Pure: whether a change the tripwire names is in the user's own domain, the
 * checkout and the refs (an edit, a commit, a pull or fetch, a branch switch,
 * `git gc`), rather than git's configuration, hooks or HOME, whose change
 * makes later commands run someone's code. Inside the sandbox no agent or
 * gate can write to the checkout or `.git`, so such a change is the user's.
 */
export function isUsersOwn(change: string): boolean {
  return /^(a change to .* in your checkout|your checkout's HEAD|a flag hiding changes to .* in your checkout|ref |branch )/.test(change);
}

async function onlyLandings(root: string, from: string, to: string): Promise<boolean> {
  if (!(await gitTry(root, ["merge-base", "--is-ancestor", from, to])).ok) return false;
  const commits = (await gitRun(root, ["rev-list", `${from}..${to}`])).split("\n").filter(Boolean);
  const landed = (await gitRun(root, ["log", "--format=%H", "--grep=^Factory-Packet:", `${from}..${to}`])).split("\n").filter(Boolean);
  return commits.length === landed.length;
}

/** The repository's hooks as they are: each file's bytes, to put back what something changed. */
export type HookSnapshot = Map<string, Buffer>;

export function snapshotHooks(commonDir: string): HookSnapshot {
  const hooks: HookSnapshot = new Map();
  const dir = join(commonDir, "hooks");
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return hooks;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      if (lstatSync(path).isFile()) hooks.set(name, readFileSync(path));
    } catch {
      // gone while read
    }
  }
  return hooks;
}

/**
 * Undoes what the tripwire can of changes to the repository's hooks: a hook that appeared is moved into
 * `keepDir` (kept as evidence), a changed one gets its old bytes back. Returns the changes with what was
 * done to each, for the blocked packet's reason.
 */
export function undoHookChanges(commonDir: string, before: HookSnapshot, changes: readonly string[], keepDir: string): string[] {
  return changes.map((change) => {
    const match = /^\.git\/hooks\/([^/]+) (appeared|changed)$/.exec(change);
    if (!match?.[1]) return change;
    const [name, how] = [match[1], match[2]];
    const path = join(commonDir, "hooks", name);
    try {
      mkdirSync(keepDir, { recursive: true });
      copyFileSync(path, join(keepDir, name));
      const old = before.get(name);
      if (how === "appeared" || old === undefined) rmSync(path, { force: true });
      else writeFileSync(path, old);
      return `${change} (undone: ${how === "appeared" ? "removed" : "restored"}; kept in ${join(keepDir, name)})`;
    } catch (error) {
      return `${change} (could not be undone: ${error instanceof Error ? error.message : String(error)})`;
    }
  });
}
