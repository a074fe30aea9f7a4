import { hostname } from "node:os";
import type { GitResult } from "../git/repo.js";
import type { Output } from "../log/output.js";
import { probeQueue, type QueueProbe } from "../packet/load.js";
import { boardCacheKey } from "../status/board-cache.js";
import { type EarlyReads, startEarlyReads } from "./early.js";
import { loadHeadOrReport, packetContext, type WorkspaceHead } from "./workspace.js";

/**
 * What the commands that only show (`status`, `plan`) start from: the
 * workspace's head and a probe of its queue, enough to name what they
 * showed last time (`keptKey`) without reading the queue or the ledger.
 */
export interface Probed {
  head: WorkspaceHead;
  probe: QueueProbe;
}

/**
 * Loads the head, with git status of packets/ started as soon as the
 * repository is known (it is the slowest read; it runs while the config is
 * read): by `early`, when the CLI started both before loading the command.
 * `settle` runs before the queue is probed; when it says the checkout
 * changed, git status is asked again.
 */
export async function loadProbedOrReport(cwd: string, output: Output, settle?: (head: WorkspaceHead) => Promise<boolean>, early: EarlyReads = startEarlyReads(cwd)): Promise<Probed | undefined> {
  const head = await loadHeadOrReport(cwd, output, early.root);
  if (!head) return undefined;
  let status: Promise<GitResult> | undefined = early.packetsStatus;
  if (settle && (await settle(head))) status = undefined;
  return { head, probe: probeQueue(head.root, head.tip, head.branch, packetContext(head.config), status) };
}

/** The key what was shown is kept under, and the ledger version in it. */
export interface KeptKey {
  key: string;
  ledger: string;
}

/** The board cache's key for the workspace as it is now; undefined when an input cannot be named (then nothing is kept or served). */
export async function keptKey({ head, probe }: Probed): Promise<KeptKey | undefined> {
  const [queue, ledger, warnings] = await Promise.all([probe.key, head.ledger.version(), probe.warnings]);
  if (queue === undefined || ledger === undefined || warnings === undefined) return undefined;
  return { key: boardCacheKey({ queue, ledger, branch: head.branch, tip: head.tip, problems: head.problems, warnings: [...head.warnings, ...warnings], host: hostname() }), ledger };
}
