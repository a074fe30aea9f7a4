import { fetchTarget } from "../git/remote.js";
import { gitTry, resolveCommit } from "../git/repo.js";
import { sleepUntil } from "../util/sleep.js";
import { moveBranch } from "./checkout.js";

export type Synced = { ok: true; tip: string } | { ok: false; reason: string; unreachable?: true };

/**
 * With a shared remote as the target: fetches the remote's target branch and
 * brings this clone's branch (and its checkout, by fast-forward) to it, so
 * the queue, the spec and every landing start from what the remote holds.
 * A clone whose branch has commits the remote does not is refused: a
 * worker's work reaches the target only by a push the remote accepted.
 */
export async function syncWithRemote(root: string, remote: string, branch: string): Promise<Synced> {
  for (let race = 0; race < 3; race++) {
    const fetched = await fetchTarget(root, remote, branch);
    if (!fetched.ok) return fetched;
    const local = await resolveCommit(root, branch);
    if (local === fetched.tip) return { ok: true, tip: local };
    if (!local) {
      const made = await gitTry(root, ["update-ref", `refs/heads/${branch}`, fetched.tip, ""]);
      if (made.ok) return { ok: true, tip: fetched.tip };
      continue;
    }
    if (!(await gitTry(root, ["merge-base", "--is-ancestor", local, fetched.tip])).ok) {
      return {
        ok: false,
        reason: `${branch} in ${root} has commits ${remote}/${branch} does not (at ${local.slice(0, 10)}; ${remote} is at ${fetched.tip.slice(0, 10)}): with [target] remote, work reaches ${branch} only through a push the remote accepted; push those commits or reset ${branch} to ${remote}/${branch}`,
      };
    }
    const moved = await moveBranch(root, branch, local, fetched.tip);
    if (moved.kind === "moved") return { ok: true, tip: fetched.tip };
    if (moved.kind === "dirty") return { ok: false, reason: `${branch} cannot follow ${remote}/${branch}: ${moved.reason}` };
  }
  return { ok: false, reason: `${branch} kept moving while following ${remote}/${branch}` };
}

/** Waits on an unreachable remote: from when, and what each wait is told. */
export interface RemotePatience {
  /** How long the remote may stay unreachable before the caller gives up (spending nothing). */
  patienceMs: number;
  signal: AbortSignal;
  /** Said once per outage, when it starts: the message, and the outage's start and cause for the ledger. */
  onUnreachable(message: string, outage: { since: string; reason: string }): Promise<void>;
  /** The remote answered again after an outage. */
  onBack(): Promise<void>;
  /** The outage began here (carried across calls of one landing). */
  since?: number;
}

const MAX_BACKOFF_MS = 15_000;

/**
 * syncWithRemote, waiting out a remote that cannot be reached (fetch failed to
 * talk to it) with backoff, up to the patience: nothing is spent meanwhile. Past
 * it, the failure names the remote and since when.
 */
export async function syncPatiently(root: string, remote: string, branch: string, patience: RemotePatience): Promise<Synced> {
  for (let tries = 0; ; tries++) {
    const synced = await syncWithRemote(root, remote, branch);
    if (synced.ok) await reachedAgain(patience);
    if (synced.ok || !synced.unreachable) return synced;
    const waited = await waitForRemote(remote, synced.reason, tries, patience);
    if (waited) return waited;
  }
}

/** One backoff of an outage, or the failure that ends it (past the patience, or interrupted). */
export async function waitForRemote(remote: string, reason: string, tries: number, patience: RemotePatience): Promise<{ ok: false; reason: string; unreachable: true } | undefined> {
  if (patience.since === undefined) {
    patience.since = Date.now();
    const message = `${remote} cannot be reached (${reason}); waiting for it with backoff (up to ${Math.round(patience.patienceMs / 1000)} s), nothing is spent meanwhile`;
    await patience.onUnreachable(message, { since: new Date(patience.since).toISOString(), reason });
  }
  const since = new Date(patience.since).toISOString();
  if (Date.now() - patience.since >= patience.patienceMs || patience.signal.aborted) {
    return { ok: false, reason: `${remote} could not be reached since ${since} (${reason})`, unreachable: true };
  }
  await sleepUntil(Math.min(patience.since + patience.patienceMs, Date.now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** tries)), patience.signal);
  return undefined;
}

/** After an outage the remote answered: said, and the next outage is a new one. */
export async function reachedAgain(patience: RemotePatience): Promise<void> {
  if (patience.since === undefined) return;
  patience.since = undefined;
  await patience.onBack();
}
