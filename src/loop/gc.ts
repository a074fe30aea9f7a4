import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { dropHeld, HELD_REFS } from "../git/held-refs.js";
import { gitRun } from "../git/repo.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import type { LedgerState } from "../ledger/fold.js";
import { STATE_DIR } from "../ledger/store.js";
import { RUNS_DIR, taskBranch, worktreePath } from "./context.js";

/** Something of the factory's own it no longer needs: a task branch (with its worktree), or a file or directory. */
export type Garbage =
  | { kind: "branch"; packet: string; why: string }
  | { kind: "path"; path: string; bytes: number; why: string }
  /** A held attempt's ref (refs/factory/held/ID) of a packet since merged: an approve killed after the landing left it. */
  | { kind: "held-ref"; packet: string; why: string };

/**
 * Pure: whether the factory is done with a packet's branch and run directory: merged, or (when
 * `gone` counts) gone from the queue while not held for a person nor running.
 */
export function doneWith(id: string, state: LedgerState, queued: ReadonlySet<string>, gone = true): string | undefined {
  const status = state.packets.get(id)?.status;
  if (status?.state === "merged") return "merged";
  if (!gone || status?.state === "awaiting_human" || status?.state === "running") return undefined;
  return queued.has(id) ? undefined : "no longer in the queue";
}

/**
 * What `factory gc` removes (DESIGN: the factory cleans up after itself):
 * the task branches and worktrees of packets it is done with; their run
 * directories, the run logs and briefs, and the cached baselines, once older
 * than `retentionMs` (by modification time). Never a packet held for a
 * person, never one still queued or blocked, never anything outside the
 * factory's own directories and `factory/` branches. `gone: false` keeps
 * what belongs to packets that left the queue (the end of a run: only a
 * person's `gc` decides they are gone for good).
 */
export async function findGarbage(input: { root: string; state: LedgerState; queued: ReadonlySet<string>; retentionMs: number; now?: number; gone?: boolean }): Promise<Garbage[]> {
  const { root } = input;
  const before = (input.now ?? Date.now()) - input.retentionMs;
  const garbage: Garbage[] = [];
  const branches = (await gitRun(root, ["for-each-ref", "--format=%(refname:lstrip=3)", "refs/heads/factory/"])).split("\n").filter(Boolean);
  for (const id of branches) {
    const why = doneWith(id, input.state, input.queued, input.gone);
    if (why) garbage.push({ kind: "branch", packet: id, why });
  }
  // Only of a merged packet: a held ref the ledger does not know of is how held work survives a lost ledger.
  const held = (await gitRun(root, ["for-each-ref", "--format=%(refname)", HELD_REFS])).split("\n").filter(Boolean);
  for (const ref of held) {
    const id = ref.slice(HELD_REFS.length);
    if (input.state.packets.get(id)?.status.state === "merged") garbage.push({ kind: "held-ref", packet: id, why: "its packet has merged since" });
  }
  const runs = join(root, RUNS_DIR);
  for (const name of list(runs)) {
    const path = join(runs, name);
    const stat = statSync(path);
    if (stat.mtimeMs >= before) continue;
    if (stat.isDirectory()) {
      // A packet's directory: kept while the packet is in play. The preflight's is reused by the next run.
      const why = name === "preflight" ? undefined : doneWith(name, input.state, input.queued, input.gone);
      if (why) garbage.push({ kind: "path", path, bytes: sizeOf(path), why: `the run directory of a packet ${why}` });
    } else if (/^(run-.*\.log|report-.*\.html)$/.test(name)) {
      garbage.push({ kind: "path", path, bytes: stat.size, why: "a run's log or brief" });
    }
  }
  const baselines = join(root, STATE_DIR, "baselines");
  for (const name of list(baselines)) {
    const path = join(baselines, name);
    const stat = statSync(path);
    if (stat.mtimeMs < before) garbage.push({ kind: "path", path, bytes: stat.size, why: "a cached baseline" });
  }
  return garbage;
}

/** Removes what findGarbage found; a task branch goes with its worktree. */
export async function removeGarbage(root: string, garbage: readonly Garbage[]): Promise<void> {
  for (const item of garbage) {
    if (item.kind === "branch") {
      await removeWorktree(root, worktreePath(root, item.packet));
      await deleteBranch(root, taskBranch(item.packet));
    } else if (item.kind === "held-ref") {
      await dropHeld(root, item.packet);
    } else {
      rmSync(item.path, { recursive: true, force: true });
    }
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function sizeOf(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  return list(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}
