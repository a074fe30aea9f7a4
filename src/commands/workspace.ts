import { loadConfig, noCommitsProblem } from "../config/load.js";
import type { Config } from "../config/types.js";
import { wholeTreeGates } from "../gates/whole-tree.js";
import { findRepoRoot } from "../git/repo.js";
import type { Ledger } from "../ledger/ledger.js";
import { openLedger } from "../ledger/open.js";
import type { Output } from "../log/output.js";
import { loadQueue, type QueueProbe } from "../packet/load.js";
import type { PacketSet } from "../packet/rules.js";
import type { PacketContext } from "../packet/types.js";
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

/** The workspace before its queue is read: repository, config, the tip and the config's own problems. */
export type WorkspaceHead = Omit<Workspace, "queue">;

export type WorkspaceLoad = { ok: true; workspace: Workspace } | { ok: false; problems: Problem[] };
export type HeadLoad = { ok: true; head: WorkspaceHead } | { ok: false; problems: Problem[] };

/** Reads config and queue; problems are collected, not thrown, so lint can report all of them. */
export async function loadWorkspace(cwd: string, options: { trustCache: boolean } = { trustCache: true }): Promise<WorkspaceLoad> {
  const load = await loadHead(cwd);
  if (!load.ok) return load;
  return { ok: true, workspace: await withQueue(load.head, options) };
}

/** The repository (`found`, when the caller has asked git already), its config and its tip, without the queue. */
export async function loadHead(cwd: string, found: Promise<string | undefined> = findRepoRoot(cwd)): Promise<HeadLoad> {
  const root = await found;
  if (!root) return { ok: false, problems: [{ file: cwd, message: "not inside a git repository; run factory in your repository (git init first)" }] };
  const { config, problems, warnings, branch, tip } = await loadConfig(root);
  if (!tip) {
    if (!problems.some((problem) => problem.key === "target_branch")) {
      problems.push(noCommitsProblem(branch));
    }
    return { ok: false, problems };
  }
  return { ok: true, head: { root, ledger: openLedger(root, config), config, branch, tip, problems, warnings } };
}

/** The workspace of `head` with its queue read (through `probe`, when the caller has started one). */
export async function withQueue(head: WorkspaceHead, options: { trustCache: boolean } = { trustCache: true }, probe?: QueueProbe): Promise<Workspace> {
  const { queue, warnings } = await loadQueue(head.root, head.tip, head.branch, packetContext(head.config), options, probe);
  return { ...head, queue, problems: [...head.problems, ...queue.problems], warnings: [...head.warnings, ...warnings] };
}

/** Loads the workspace, or prints why it cannot be loaded (exit 2 for the caller). */
export async function loadWorkspaceOrReport(cwd: string, output: Output, options: { trustCache: boolean } = { trustCache: true }): Promise<Workspace | undefined> {
  const load = await loadWorkspace(cwd, options);
  if (load.ok) return load.workspace;
  reportProblems(load.problems, output);
  return undefined;
}

/** Loads the workspace's head, or prints why it cannot be loaded (exit 2 for the caller). */
export async function loadHeadOrReport(cwd: string, output: Output, found?: Promise<string | undefined>): Promise<WorkspaceHead | undefined> {
  const load = await loadHead(cwd, found);
  if (load.ok) return load.head;
  reportProblems(load.problems, output);
  return undefined;
}

function reportProblems(problems: readonly Problem[], output: Output): void {
  for (const problem of problems) output.err(formatProblem(problem));
}

export function packetContext(config: Config | undefined): PacketContext {
  if (!config) return { tiers: undefined, surfaces: undefined, defaultMaxAttempts: 3 };
  return {
    tiers: config.tiers.map((tier) => tier.name),
    surfaces: config.surfaces.map((surface) => surface.name),
    testSurfaces: config.surfaces.filter((surface) => surface.gates.some((gate) => gate.tests)).map((surface) => surface.name),
    gates: new Map(config.surfaces.map((surface) => [surface.name, surface.gates.map((gate) => ({ name: gate.name, wholeTree: wholeTreeGates(surface).includes(gate) }))])),
    defaultMaxAttempts: config.limits.maxAttempts,
  };
}
