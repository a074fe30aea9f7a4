import { fetchTarget } from "../git/remote.js";
import { gitTry, resolveCommit } from "../git/repo.js";
import { moveBranch } from "./checkout.js";

export type Synced = { ok: true; tip: string } | { ok: false; reason: string };

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
