import { sandboxed } from "./sandbox.js";
import { join } from "node:path";
import { gitRun, listTreeFiles } from "../git/repo.js";
import { commitPaths, createWorktree } from "../git/worktree.js";
import { SUPPLIED_DIR } from "../packet/load.js";
import type { Packet } from "../packet/types.js";
import type { Surface } from "../config/types.js";
import { baseEnv, describeOutcome, runCommand } from "../process/run.js";
import { shellQuote } from "../gates/paths.js";
import type { PlantedCases } from "../gates/test-compare.js";
import { taskBranch, worktreePath, type RunContext } from "./context.js";

/** A fresh worktree on the task branch, at the target tip. */
export async function prepareWorktree(ctx: RunContext, packet: Packet, tip: string): Promise<string> {
  const path = worktreePath(ctx.root, packet.id);
  const created = await createWorktree(ctx.root, { path, branch: taskBranch(packet.id), start: tip });
  if (created.movedAside)
    ctx.emit({ kind: "notice", packet: packet.id, message: `something that was not this packet's worktree was at ${path}; moved aside to ${created.movedAside} (nothing deleted)` });
  return path;
}

/** Runs the surface's install command once in a fresh worktree; a failure is the environment's. */
export async function installSurface(ctx: Pick<RunContext, "root" | "config" | "signal">, worktree: string, surface: Surface, runDir: string): Promise<string | undefined> {
  if (!surface.install) return undefined;
  const outcome = await runCommand({
    command: surface.install,
    cwd: join(worktree, surface.dir),
    env: baseEnv(),
    timeoutMs: ctx.config.limits.installTimeoutMs,
    logFile: join(runDir, `install-${surface.name}.log`),
    signal: ctx.signal,
    ...sandboxed(ctx, worktree, true), // an install fetches dependencies
  });
  if (outcome.kind === "exited" && outcome.code === 0) return undefined;
  return `install of surface "${surface.name}" (${surface.install}) ${describeOutcome(outcome)}`;
}

export interface Planting {
  commit: string;
  /** Repository paths of the planted files. */
  files: string[];
  /** Per tests gate: the planted test cases seen right after planting, which must pass after the implementation. */
  cases?: Record<string, PlantedCases>;
}

/**
 * Copies `packets/supplied/<ID>/` from git at the tip into the worktree,
 * mirroring repository paths, and commits it. `git archive` keeps bytes and
 * modes exactly (binary fixtures included).
 */
export async function plant(ctx: Pick<RunContext, "root">, worktree: string, packet: Packet, tip: string): Promise<Planting> {
  const prefix = `${SUPPLIED_DIR}/${packet.id}/`;
  const supplied = await listTreeFiles(ctx.root, tip, prefix);
  const files = supplied.map((path) => path.slice(prefix.length));
  if (files.length === 0) return { commit: (await gitRun(worktree, ["rev-parse", "HEAD"])).trim(), files };
  const depth = prefix.split("/").length - 1;
  const outcome = await runCommand({
    command: `git archive --format=tar ${shellQuote(tip)} ${shellQuote(prefix)} | tar -x --strip-components=${depth} -C ${shellQuote(worktree)}`,
    cwd: ctx.root,
    env: baseEnv(),
    timeoutMs: 120_000,
  });
  if (outcome.kind !== "exited" || outcome.code !== 0) throw new Error(`planting ${prefix} failed: ${describeOutcome(outcome)}`);
  // Only the planted files: nothing else in the worktree is the packet's.
  const commit = await commitPaths(worktree, files, `factory: plant the supplied files of ${packet.id}`);
  return { commit, files };
}
