import { loadConfig, noCommitsProblem } from "../config/load.js";
import type { Config } from "../config/types.js";
import { findRepoRoot } from "../git/repo.js";
import { fileLedger } from "../ledger/file-ledger.js";
import type { Ledger } from "../ledger/ledger.js";
import { loadQueue } from "../packet/load.js";
import type { PacketSet } from "../packet/rules.js";
import type { PacketContext } from "../packet/types.js";
import type { Output } from "../log/output.js";
import { formatProblem, type Problem } from "../util/problem.js";

/** Everything a command reads before it acts: the repository, its config and its queue. */
export type Workspace = {
  root: string;
  ledger: Ledger;
  /** Undefined when the config has problems (they are in `problems`). */
  config: Config | undefined;
  branch: string;
  /** The commit the queue was read from. */
  tip: string;
  queue: PacketSet;
  /** Config and packet problems, all of them. */
  problems: Problem[];
  warnings: string[];
};

export type WorkspaceLoad = { ok: true; workspace: Workspace } | { ok: false; problems: Problem[] };

/** Reads config and queue; problems are collected, not thrown, so lint can report all of them. */
export async function loadWorkspace(cwd: string, options: { trustCache: boolean } = { trustCache: true }): Promise<WorkspaceLoad> {
  const root = await findRepoRoot(cwd);
  if (!root) return { ok: false, problems: [{ file: cwd, message: "not inside a git repository; run factory in your repository (git init first)" }] };
  const { config, problems, warnings: configWarnings, branch, tip } = await loadConfig(root);
  if (!tip) {
    if (!problems.some((problem) => problem.key === "target_branch")) {
      problems.push(noCommitsProblem(branch));
    }
    return { ok: false, problems };
  }
  const { queue, warnings: queueWarnings } = await loadQueue(root, tip, branch, packetContext(config), options);
  const warnings = [...configWarnings, ...queueWarnings];
  problems.push(...queue.problems);
  return { ok: true, workspace: { root, ledger: fileLedger(root), config, branch, tip, queue, problems, warnings } };
}

/** Loads the workspace, or prints why it cannot be loaded (exit 2 for the caller). */
export async function loadWorkspaceOrReport(cwd: string, output: Output, options: { trustCache: boolean } = { trustCache: true }): Promise<Workspace | undefined> {
  const load = await loadWorkspace(cwd, options);
  if (load.ok) return load.workspace;
  for (const problem of load.problems) output.err(formatProblem(problem));
  return undefined;
}

export function packetContext(config: Config | undefined): PacketContext {
  if (!config) return { tiers: undefined, surfaces: undefined, defaultMaxAttempts: 3 };
  return {
    tiers: config.tiers.map((tier) => tier.name),
    surfaces: config.surfaces.map((surface) => surface.name),
    testSurfaces: config.surfaces.filter((surface) => surface.gates.some((gate) => gate.tests)).map((surface) => surface.name),
    defaultMaxAttempts: config.limits.maxAttempts,
  };
}
