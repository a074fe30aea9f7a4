import { gitTry, resolveCommit } from "./repo.js";

/**
 * The shared remote as the target (DESIGN §16): the remote's branch is the
 * authority on what landed. A worker fetches it, lands on what it fetched,
 * and pushes with `--force-with-lease` naming that tip (git's
 * compare-and-swap on the remote): a push that lost the race is refused as
 * stale, and the worker fetches and tries again.
 */
export type Fetched = { ok: true; tip: string } | { ok: false; reason: string; unreachable?: true };

/** The remote-tracking ref of the target branch. */
export function trackingRef(remote: string, branch: string): string {
  return `refs/remotes/${remote}/${branch}`;
}

/** Fetches the remote's target branch into its tracking ref; the remote's own message when it cannot. */
export async function fetchTarget(root: string, remote: string, branch: string): Promise<Fetched> {
  const fetched = await gitTry(root, ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote, `+refs/heads/${branch}:${trackingRef(remote, branch)}`]);
  if (!fetched.ok) return { ok: false, reason: `git fetch ${remote} ${branch} failed: ${lastLines(fetched.message)}`, unreachable: true };
  const tip = await resolveCommit(root, trackingRef(remote, branch));
  return tip ? { ok: true, tip } : { ok: false, reason: `${remote} has no branch ${branch}` };
}

export type Pushed = { kind: "pushed" } | { kind: "stale"; detail: string } | { kind: "refused"; reason: string } | { kind: "unreachable"; reason: string };

/** What git says when it could not talk to the remote at all (not a refusal by the remote). */
const UNREACHABLE =
  /unable to access|Could not read from remote repository|Connection (refused|timed out|reset)|Could not resolve host|does not appear to be a git repository|Network is unreachable|early EOF/i;

/**
 * Pushes `commit` as the remote's `branch`, only if the remote's branch is
 * still `expected` (the tip the landing was gated against).
 */
export async function pushLanding(root: string, input: { remote: string; branch: string; commit: string; expected: string }): Promise<Pushed> {
  const { remote, branch, commit, expected } = input;
  const pushed = await gitTry(root, ["push", "--porcelain", "--no-verify", `--force-with-lease=refs/heads/${branch}:${expected}`, remote, `${commit}:refs/heads/${branch}`]);
  if (pushed.ok) return { kind: "pushed" };
  const text = pushed.message;
  // Lost the race: the remote moved since the fetch (stale info), or is not an ancestor (fetch first).
  if (/\[rejected\].*\((stale info|fetch first|non-fast-forward)\)/.test(text)) return { kind: "stale", detail: lastLines(text) };
  // Or lost it inside the remote: two pushes passed the lease check at once, and the remote's own ref lock let one through.
  if (/cannot lock ref '[^']+': is at [0-9a-f]+ but expected [0-9a-f]+/.test(text) || /cannot lock ref '[^']+':.*(File exists|Unable to create)/.test(text)) {
    return { kind: "stale", detail: lastLines(text) };
  }
  if (!/\[remote rejected\]|^remote:/m.test(text) && UNREACHABLE.test(text)) return { kind: "unreachable", reason: `git push ${remote} ${branch} failed: ${lastLines(text)}` };
  const remoteSays = text
    .split("\n")
    .filter((line) => line.startsWith("remote:") || line.includes("[remote rejected]") || /^(fatal|error):/.test(line))
    .map((line) => line.trim());
  return { kind: "refused", reason: `${remote} refused the push to ${branch}: ${remoteSays.length ? remoteSays.join(" / ") : lastLines(text)}` };
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-4).join(" / ");
}

/** Whether `name` is a remote of the repository at `root` (`git remote get-url` knows it). */
export async function remoteExists(root: string, name: string): Promise<boolean> {
  return (await gitTry(root, ["remote", "get-url", name])).ok;
}
