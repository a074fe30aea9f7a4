import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { lockInMessage, lockLeftMessage } from "../git/locks.js";
import { gitTry, gitTryInTurn, resolveCommit } from "../git/repo.js";
import { STATE_DIR, withLandLock } from "../ledger/store.js";
import { crashPoint } from "../util/crash-point.js";

/**
 * The user's checkout of the target follows a landing in two steps: the ref
 * moves by compare-and-swap, then the checkout's index and files are brought
 * from the old tip to the new one (git's two-way merge, as a fast-forward
 * does it: the user's own changes to other files are kept, and it refuses
 * rather than overwrite one). A note in the state directory says a checkout
 * is on its way, so that a run killed between the two steps is finished by
 * the next run or `status`, never left with the packet's files looking
 * reverted on the new HEAD.
 */
const NOTE = "checkout-forward.json";
/** Rewritten (a new random token) each time a move of the checkout ends: a reader sees whether one ended while it looked. */
const MOVES = "checkout-moves";

/**
 * Whether a move of the target's checkout is under way (its note was written
 * in the last 10 s: a move takes well under a second, an older note was left
 * by a move that stopped half-way), and which moves have ended.
 */
export function checkoutMoves(root: string, now = Date.now()): { moving: boolean; ended: string } {
  let ended = "";
  let moving = false;
  try {
    ended = readFileSync(join(root, STATE_DIR, MOVES), "utf8");
  } catch {
    // no move has ended here yet
  }
  try {
    moving = statSync(join(root, STATE_DIR, NOTE)).mtimeMs > now - 10_000;
  } catch {
    // no move under way
  }
  return { moving, ended };
}

function moveEnded(root: string, note: string): void {
  rmSync(note, { force: true });
  writeFileSync(join(root, STATE_DIR, MOVES), randomUUID());
}

interface Forward {
  checkout: string;
  from: string;
  to: string;
}

export type Moved = { kind: "moved"; notice?: string } | { kind: "raced" } | { kind: "dirty"; reason: string };

/** Moves `branch` from `from` to `to` and brings its checkout along; refuses before moving when the checkout could not follow. */
export async function moveWithCheckout(root: string, input: { branch: string; checkout: string; from: string; to: string }): Promise<Moved> {
  const { checkout, from, to } = input;
  if ((await resolveCommit(checkout, "HEAD")) !== from) return { kind: "raced" };
  const dry = await gitTry(checkout, ["read-tree", "-m", "-u", "-n", from, to]);
  if (!dry.ok) return { kind: "dirty", reason: refusal(input.branch, checkout, dry.message) };
  const note = join(root, STATE_DIR, NOTE);
  writeFileSync(note, JSON.stringify({ checkout, from, to } satisfies Forward));
  crashPoint("land-before-move");
  const move = ["update-ref", "-m", "factory: land", `refs/heads/${input.branch}`, to, from];
  const forward = ["read-tree", "-m", "-u", from, to];
  // With the checkout at the root, one turn: no other git call of this process (a tripwire's
  // git status of the checkout) runs between the move and the checkout following it.
  const [swapped, followed] =
    resolve(checkout) === resolve(root) ? await gitTryInTurn(root, [{ args: move }, { args: forward, before: () => crashPoint("land-after-move") }]) : [await gitTry(root, move)];
  if (!swapped?.ok) {
    rmSync(note, { force: true });
    const lock = lockInMessage(swapped?.message ?? "");
    return lock ? { kind: "dirty", reason: lockLeftMessage(lock) } : { kind: "raced" };
  }
  let forwarded = followed;
  if (!forwarded) {
    crashPoint("land-after-move");
    forwarded = await gitTry(checkout, forward);
  }
  if (!forwarded.ok) return { kind: "moved", notice: behind(input.branch, checkout, forwarded.message) };
  moveEnded(root, note);
  return { kind: "moved" };
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
  if (head !== forward.to) {
    // The ref never moved (killed before the swap), or the checkout has moved on since: nothing of ours to finish.
    rmSync(note, { force: true });
    return undefined;
  }
  const forwarded = await gitTry(forward.checkout, ["read-tree", "-m", "-u", forward.from, forward.to]);
  if (!forwarded.ok) return behind(branch, forward.checkout, forwarded.message);
  moveEnded(root, note);
  return `your checkout of ${branch} at ${forward.checkout} was left half-way to ${forward.to.slice(0, 10)} by a run that was stopped; it is brought forward now (your own changes kept)`;
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
