import { statSync } from "node:fs";
import { join } from "node:path";
import { commonGitDir } from "../git/dirs.js";
import { missingCommits } from "../git/repo.js";
import type { LedgerState } from "../ledger/fold.js";
import { formatDuration } from "../util/duration.js";

/** How current this clone's view of the target is: the board reads packets and landings from its own git. */
export interface TargetView {
  remote: string;
  branch: string;
  /** When this clone last fetched from the remote (FETCH_HEAD's time), if ever. */
  fetched_at: string | null;
  /** Landings the (shared) ledger records whose commits this clone does not have. */
  missing_landings: number;
}

/** Reads the view's age and the landings it lacks; undefined without a shared remote. */
export async function readTargetView(root: string, target: { remote?: string | undefined; branch: string }, state: Pick<LedgerState, "packets">): Promise<TargetView | undefined> {
  if (!target.remote) return undefined;
  const landed = [...state.packets.values()].flatMap((record) => (record.status.state === "merged" ? [record.status.commit] : []));
  let fetchedAt: string | null = null;
  try {
    fetchedAt = statSync(join(await commonGitDir(root), "FETCH_HEAD")).mtime.toISOString();
  } catch {
    // never fetched
  }
  return { remote: target.remote, branch: target.branch, fetched_at: fetchedAt, missing_landings: (await missingCommits(root, landed)).length };
}

/** Pure: the line status prints about the view; `warn` when the view lacks landings the ledger has. */
export function targetViewLine(view: TargetView, now: number): { text: string; warn: boolean } {
  const age =
    view.fetched_at === null ? `never fetched from ${view.remote}` : `last fetched from ${view.remote} ${formatDuration(Math.max(0, now - Date.parse(view.fetched_at)))} ago (${view.fetched_at})`;
  const lacking =
    view.missing_landings > 0 ? `; the ledger records ${view.missing_landings} landing(s) this clone does not have: \`git pull\` (or any factory run, which fetches first) brings them` : "";
  return { text: `This clone's ${view.branch}: ${age}${lacking}.`, warn: view.missing_landings > 0 };
}
