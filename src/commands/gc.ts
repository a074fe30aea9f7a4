import { relative } from "node:path";
import { HELD_REFS } from "../git/held-refs.js";
import { acquireRunLock } from "../ledger/run-lock.js";
import type { Output } from "../log/output.js";
import { findGarbage, type Garbage, removeGarbage } from "../loop/gc.js";
import { formatSize } from "../util/size.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { refuseAgents } from "./packet-record.js";
import { loadWorkspaceOrReport, type Workspace } from "./workspace.js";

export interface GcOptions {
  cwd: string;
  dryRun: boolean;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/**
 * Removes what the factory made and no longer needs (loop/gc.ts): the task
 * branches and worktrees of merged packets and of packets gone from the
 * queue, and run directories, logs and cached baselines older than
 * `[retention] runs`. Never while a run is going on.
 */
export async function gc(options: GcOptions): Promise<ExitCode> {
  const { output } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory gc refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace?.config) return EXIT.invalid;
  const lock = await acquireRunLock(workspace.root);
  if (!lock.ok) {
    output.err(`factory gc: a run holds ${workspace.root}/.factory/state/run.lock (pid ${lock.holder.pid} on ${lock.holder.host}); run gc when it has ended`);
    return EXIT.invalid;
  }
  try {
    const garbage = await garbageOf(workspace, { gone: true });
    if (garbage.length === 0) {
      output.out("nothing to remove");
      return EXIT.ok;
    }
    if (!options.dryRun) await removeGarbage(workspace.root, garbage);
    for (const item of garbage) output.out(`${options.dryRun ? "would remove" : "removed"} ${describe(workspace.root, item)}`);
    const bytes = garbage.reduce((total, item) => total + (item.kind === "path" ? item.bytes : 0), 0);
    output.out(`${garbage.length} item(s), ${formatSize(bytes)} of files${options.dryRun ? " (nothing removed: --dry-run)" : ""}`);
    return EXIT.ok;
  } finally {
    await lock.release();
  }
}

/** What a workspace's factory no longer needs, judged by its ledger, its queue and its retention. */
export async function garbageOf(workspace: Workspace, options: { gone: boolean; now?: number }): Promise<Garbage[]> {
  const { state } = await workspace.ledger.read();
  const queued = new Set([...workspace.queue.parsed.map((packet) => packet.id), ...workspace.queue.invalid.keys()]);
  return findGarbage({ root: workspace.root, state, queued, retentionMs: workspace.config?.retention.runsMs ?? Number.POSITIVE_INFINITY, ...options });
}

function describe(root: string, item: Garbage): string {
  if (item.kind === "branch") return `branch factory/${item.packet} and its worktree (${item.why})`;
  if (item.kind === "held-ref") return `${HELD_REFS}${item.packet}, its held attempt (${item.why})`;
  return `${relative(root, item.path)} (${formatSize(item.bytes)}; ${item.why})`;
}
