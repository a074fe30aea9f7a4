import { gitReadAside } from "./repo.js";

/**
 * A landing the target's history no longer contains (issue 56 §4): main was
 * force-pushed or reset to a history without it. The ledger still says merged;
 * the remote is the authority, so every command that shows the night says so.
 */
export interface RemovedLanding {
  packet: string;
  /** The landing commit. */
  commit: string;
  /** The target's tip that does not contain it. */
  tip: string;
  /** Where the landing's history and the tip's part (their merge base), if they share one. */
  fork: string | undefined;
}

/** How many of the newest landings are looked for: a rewrite of the target removes recent work. */
const NEWEST = 50;

/**
 * The landings among the `newest` merged packets (in the ledger's order) that `tip` no longer contains:
 * one `git rev-list` of those commits not reachable from the tip (a commit this clone lacks is skipped),
 * and a merge base for each one found.
 */
export async function removedLandings(root: string, tip: string, merged: readonly { packet: string; commit: string }[]): Promise<RemovedLanding[]> {
  const newest = merged.filter((landing) => /^[0-9a-f]{40}$/.test(landing.commit)).slice(-NEWEST);
  if (newest.length === 0) return [];
  const listed = await gitReadAside(root, ["rev-list", "--ignore-missing", ...newest.map((landing) => landing.commit), "--not", tip, "--"]);
  if (!listed.ok) return [];
  const outside = new Set(listed.out.split("\n").filter(Boolean));
  const removed: RemovedLanding[] = [];
  for (const landing of newest) {
    if (!outside.has(landing.commit)) continue;
    const base = await gitReadAside(root, ["merge-base", landing.commit, tip]);
    removed.push({ ...landing, tip, fork: base.ok ? base.out.trim() || undefined : undefined });
  }
  return removed;
}

/** Pure: what a person reads about a removed landing, and the two ways on. */
export function describeRemoved(removed: RemovedLanding, branch: string): string {
  const short = (sha: string): string => sha.slice(0, 10);
  const where = removed.fork ? `, which parts from it at ${short(removed.fork)}` : ", which shares no history with it";
  return (
    `${removed.packet} landed as ${short(removed.commit)}, but ${branch} no longer contains it: ${branch} was rewritten (a force-push or a reset) to ${short(removed.tip)}${where}. ` +
    `To land it again: factory reset ${removed.packet}; to accept it is gone: factory acknowledge ${removed.packet}`
  );
}
