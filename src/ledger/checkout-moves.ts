import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { STATE_DIR } from "./scan.js";

/** The note of a move of the target's checkout under way (merge/checkout.ts). */
export const CHECKOUT_NOTE = "checkout-forward.json";
/** Rewritten (a new random token) each time a move of the checkout ends: a reader sees whether one ended while it looked. */
export const CHECKOUT_MOVES = "checkout-moves";

/**
 * Whether a move of the target's checkout is under way (its note was written
 * in the last 10 s: a move takes well under a second, an older note was left
 * by a move that stopped half-way), and which moves have ended.
 */
export function checkoutMoves(root: string, now = Date.now()): { moving: boolean; ended: string } {
  let ended = "";
  let moving = false;
  try {
    ended = readFileSync(join(root, STATE_DIR, CHECKOUT_MOVES), "utf8");
  } catch {
    // no move has ended here yet
  }
  try {
    moving = statSync(join(root, STATE_DIR, CHECKOUT_NOTE)).mtimeMs > now - 10_000;
  } catch {
    // no move under way
  }
  return { moving, ended };
}
