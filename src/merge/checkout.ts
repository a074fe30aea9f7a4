import { randomUUID } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { lockInMessage, lockLeftMessage } from "../git/locks.js";
import { gitRun, gitTry, gitTryInTurn, resolveCommit, serialize } from "../git/repo.js";
import { listWorktrees } from "../git/worktree.js";
import { CHECKOUT_MOVES as MOVES, CHECKOUT_NOTE as NOTE } from "../ledger/checkout-moves.js";
import { STATE_DIR, withLandLock } from "../ledger/store.js";

import { crashPoint } from "../util/crash-point.js";
import { readText } from "../util/read-text.js";

/**
 * The user's checkout of the target follows a landing: the ref moves by
 * compare-and-swap, then the checkout's index and files are brought from the
 * old tip to the new one (git's two-way merge, as a fast-forward does it: the
 * user's own changes to other files are kept, and it refuses rather than
 * overwrite one). The checkout's index lock is taken before the ref moves and
 * released only when the new index is in place, so no git command of the
 * user's commits the old index on the new tip (a `git commit -a` between the
 * two would have undone the packet): it fails while the lock is held, and the
 * new index is written to a file of its own and renamed into place. A note in
 * the state directory says a move is under way, so that one killed half-way
 * is finished (and the lock released) by the next command that lands or
 * reads the board.
 */
function moveEnded(root: string, note: string): void {
  rmSync(note, { force: true });
  writeFileSync(join(root, STATE_DIR, MOVES), randomUUID());
}

interface Forward {
  checkout: string;
  from: string;
  to: string;
  /** The checkout's index lock as the move took it: its path and the token written in it. */
  lock?: { path: string; token: string };
  /** The new index, written beside the index: its path, and its inode before git wrote it (a new inode: written whole). */
  next?: { path: string; ino: number };
}

export type Moved = { kind: "moved"; notice?: string } | { kind: "raced" } | { kind: "dirty"; reason: string };

/** Moves `branch` from `from` to `to` and brings its checkout along; refuses before moving when the checkout could not follow. */
export async function moveWithCheckout(root: string, input: { branch: string; checkout: string; from: string; to: string }): Promise<Moved> {
  const { checkout, from, to } = input;
  if ((await resolveCommit(checkout, "HEAD")) !== from) return { kind: "raced" };
  const dry = await gitTry(checkout, ["read-tree", "-m", "-u", "-n", from, to]);
  if (!dry.ok) return { kind: "dirty", reason: refusal(input.branch, checkout, dry.message) };
  const gitDir = resolve(checkout, (await gitRun(checkout, ["rev-parse", "--git-dir"])).trim());
  const index = join(gitDir, "index");
  const lock = { path: join(gitDir, "index.lock"), token: `factory ${process.pid} ${randomUUID()}\n` };
  try {
    writeFileSync(lock.path, lock.token, { flag: "wx" }); // as git takes it: fails when the file exists
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return { kind: "dirty", reason: lockLeftMessage(lock.path) };
    throw error;
  }
  const next = join(gitDir, `index.factory-${process.pid}`);
  let forward: Forward;
  try {
    copyFileSync(index, next);
    forward = { checkout, from, to, lock, next: { path: next, ino: statSync(next).ino } };
  } catch (error) {
    releaseLock(lock);
    throw error;
  }
  const note = join(root, STATE_DIR, NOTE);
  mkdirSync(dirname(note), { recursive: true }); // a clone on the PostgreSQL ledger may have no state directory yet
  writeFileSync(note, JSON.stringify(forward));
  crashPoint("land-before-move");
  const move = ["update-ref", "-m", "factory: land", `refs/heads/${input.branch}`, to, from];
  // One turn: no other git call of this process (a tripwire's git status of the checkout) runs between the
  // move and the checkout following it. The new index goes into place while the lock is still held.
  const [swapped, followed] = await gitTryInTurn(root, [
    { args: move },
    { args: ["read-tree", "-m", "-u", from, to], cwd: checkout, options: { indexFile: next }, before: () => crashPoint("land-after-move"), after: () => crashPoint("land-after-forward") },
  ]);
  if (!swapped?.ok) {
    rmSync(next, { force: true });
    releaseLock(lock);
    rmSync(note, { force: true });
    const left = lockInMessage(swapped?.message ?? "");
    return left ? { kind: "dirty", reason: lockLeftMessage(left) } : { kind: "raced" };
  }
  if (!followed?.ok) {
    rmSync(next, { force: true });
    releaseLock(lock);
    return { kind: "moved", notice: behind(input.branch, checkout, followed?.message ?? "") };
  }
  renameSync(next, index);
  releaseLock(lock);
  moveEnded(root, note);
  return { kind: "moved" };
}

/** Removes the index lock the move took, if it is still the move's own (its token in it). */
function releaseLock(lock: { path: string; token: string }): void {
  if (readText(lock.path) === lock.token) rmSync(lock.path, { force: true });
}

/** finishCheckout under the landing lock, for a command that is not landing itself; nothing is touched when no note is left. */
export async function finishLeftCheckout(root: string, branch: string): Promise<string | undefined> {
  if (!existsSync(join(root, STATE_DIR, NOTE))) return undefined;
  return withLandLock(root, () => finishCheckout(root, branch));
}

/**
 * Finishes a checkout a killed run left half-way (see NOTE): a notice when it
 * did or could not, undefined when there was nothing to finish.
 */
export async function finishCheckout(root: string, branch: string): Promise<string | undefined> {
  const note = join(root, STATE_DIR, NOTE);
  let forward: Forward;
  try {
    forward = JSON.parse(readFileSync(note, "utf8")) as Forward;
  } catch {
    return undefined;
  }
  const head = await resolveCommit(forward.checkout, "HEAD");
  const ours = forward.lock && readText(forward.lock.path) === forward.lock.token;
  if (head !== forward.to) {
    // The ref never moved (killed before the swap), or the checkout has moved on since: nothing of ours to finish.
    if (forward.next) rmSync(forward.next.path, { force: true });
    if (forward.lock) releaseLock(forward.lock);
    rmSync(note, { force: true });
    return undefined;
  }
  const message = `your checkout of ${branch} at ${forward.checkout} was left half-way to ${forward.to.slice(0, 10)} by a run that was stopped; it is brought forward now (your own changes kept)`;
  // The new index written whole (git renamed it into place: a new inode) while the lock was still ours: put it in place.
  if (ours && forward.next && forward.lock && inodeOf(forward.next.path) !== undefined && inodeOf(forward.next.path) !== forward.next.ino) {
    renameSync(forward.next.path, join(dirname(forward.lock.path), "index"));
    releaseLock(forward.lock);
    moveEnded(root, note);
    return message;
  }
  if (forward.next) rmSync(forward.next.path, { force: true });
  if (forward.lock) releaseLock(forward.lock);
  const forwarded = await gitTry(forward.checkout, ["read-tree", "-m", "-u", forward.from, forward.to]);
  if (!forwarded.ok) return behind(branch, forward.checkout, forwarded.message);
  moveEnded(root, note);
  return message;
}

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

function refusal(branch: string, checkout: string, message: string): string {
  const lock = lockInMessage(message);
  if (lock) return lockLeftMessage(lock);
  const files = [...message.matchAll(/'([^']+)'/g)].map((match) => match[1]);
  const named = files.length ? `: it would overwrite ${files.slice(0, 5).join(", ")}${files.length > 5 ? ", …" : ""}` : ` (${message.split("\n")[0]})`;
  return `git refuses to fast-forward the checkout of ${branch} at ${checkout}${named}; commit or stash your changes there, then run factory again`;
}

function behind(branch: string, checkout: string, message: string): string {
  const lock = lockInMessage(message);
  if (lock) return `${branch} moved, but your checkout at ${checkout} could not follow: ${lockLeftMessage(lock)}; then \`factory status\` brings it forward`;
  return `${branch} moved, but your checkout at ${checkout} could not follow (${message.split("\n")[0]}); commit or stash your changes there, then run \`factory status\` to bring it forward`;
}

/** Compare-and-swap of `branch` from `from` to `to`, and its checkout brought along when it has one. */
export async function moveBranch(root: string, branch: string, from: string, to: string): Promise<Moved> {
  const checkout = (await listWorktrees(root)).find((worktree) => worktree.branch === branch);
  if (!checkout) {
    const swapped = await gitTry(root, ["update-ref", "-m", "factory: land", `refs/heads/${branch}`, to, from]);
    if (swapped.ok) return { kind: "moved" };
    const lock = lockInMessage(swapped.message);
    return lock ? { kind: "dirty", reason: lockLeftMessage(lock) } : { kind: "raced" };
  }
  return oneMoveAtATime(root, () => moveWithCheckout(root, { branch, checkout: checkout.path, from, to }));
}

/**
 * Runs moves of one repository's checkout one after another within this process: the fleet's lander
 * following the remote while another attempt of the same worker starts from it would otherwise meet the
 * other's index lock and take it for one a killed git left. (A key of its own: the git writes inside a move
 * are serialized by the repository's root.)
 */
function oneMoveAtATime<T>(root: string, move: () => Promise<T>): Promise<T> {
  return serialize(join(root, STATE_DIR, "checkout-move"), move);
}
