import { currentBranch, listTree, readBlobs } from "../git/repo.js";
import type { Output } from "../log/output.js";
import { paint } from "../log/output.js";
import { pinnedSpec } from "../loop/spec-drift.js";
import { contentFindings, tipIndex } from "../packet/content-lint.js";
import { inputProblems } from "../packet/input-lint.js";
import { PACKETS_DIR } from "../packet/load.js";
import type { Packet } from "../packet/types.js";
import { assessmentRefusals } from "../planning/policy.js";
import { formatProblem, type Problem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspace, type Workspace } from "./workspace.js";

export interface LintOptions {
  cwd: string;
  ids: string[];
  json: boolean;
  output: Output;
}

/** Validates config and packets and reports every problem at once. Writes nothing. */
export async function lint(options: LintOptions): Promise<ExitCode> {
  const { output } = options;
  const load = await loadWorkspace(options.cwd);
  if (!load.ok) {
    if (options.json) output.out(JSON.stringify({ ok: false, problems: load.problems, warnings: [] }, null, 2));
    else for (const problem of load.problems) output.err(formatProblem(problem));
    return EXIT.invalid;
  }
  const { workspace } = load;
  const input = workspace.config ? await inputProblems({ root: workspace.root, tip: workspace.tip, config: workspace.config, packets: workspace.queue.packets }) : [];
  let problems = [...workspace.problems, ...(await unresolvedSpecs(workspace.root, workspace.queue.packets)), ...(await unassessed(workspace)), ...input];
  let checked = workspace.queue.packets.length + new Set(problems.map((p) => p.file)).size;
  if (options.ids.length > 0) {
    const selection = selectFiles(workspace.queue.packets, problems, options.ids);
    problems = problems.filter((problem) => !problem.file.startsWith("packets/") || selection.files.has(problem.file));
    problems.push(...selection.unknown.map((id) => ({ file: "packets/", message: `no packet with id "${id}" on ${workspace.branch}` })));
    checked = selection.files.size;
  }
  const selected = options.ids.length > 0 ? workspace.queue.packets.filter((packet) => options.ids.includes(packet.id)) : workspace.queue.packets;
  const checkedOut = await currentBranch(options.cwd);
  // The queue is the target branch's: a person on another branch must know lint did not read theirs.
  const elsewhere =
    checkedOut !== undefined && checkedOut !== workspace.branch
      ? [`lint reads the queue as committed on ${workspace.branch} (the target branch), not on ${checkedOut}, which you have checked out: commit packets to ${workspace.branch} to queue them`]
      : [];
  const warnings = [...elsewhere, ...workspace.warnings, ...(await contentWarnings(workspace.root, workspace.tip, workspace.queue.packets, selected))];
  if (options.json) {
    output.out(JSON.stringify({ ok: problems.length === 0, problems, warnings }, null, 2));
    return problems.length === 0 ? EXIT.ok : EXIT.invalid;
  }
  for (const warning of warnings) output.err(`${paint(output, "yellow", "warning")}: ${warning}`);
  for (const problem of problems) output.err(formatProblem(problem));
  if (problems.length > 0) {
    const files = new Set(problems.map((problem) => problem.file)).size;
    output.err(`${problems.length} problem(s) in ${files} file(s)`);
    return EXIT.invalid;
  }
  output.out(`ok: config and ${checked} packet(s) on ${workspace.branch} are valid`);
  return EXIT.ok;
}

/**
 * Each packet's spec_commit must be a commit of this repository holding spec_path: otherwise every run
 * refuses the packet, so lint says so first. Packets pinned to the same spec are resolved once.
 */
async function unresolvedSpecs(root: string, packets: readonly Packet[]): Promise<Problem[]> {
  const resolved = new Map<string, Promise<Awaited<ReturnType<typeof pinnedSpec>>>>();
  const problems: Problem[] = [];
  for (const packet of packets) {
    const key = `${packet.specCommit}\0${packet.specPath}`;
    if (!resolved.has(key)) resolved.set(key, pinnedSpec(root, packet));
    const spec = await resolved.get(key);
    if (spec && !spec.ok) problems.push({ file: packet.file, key: spec.problem.startsWith("spec_commit") ? "spec_commit" : "spec_path", message: spec.problem });
  }
  return problems;
}

/**
 * The content lint (packet/content-lint.ts) of `selected`, against the tip:
 * one listing of the tip's files, and the planted Python files read by blob
 * id in one batch.
 */
async function contentWarnings(root: string, tip: string, all: readonly Packet[], selected: readonly Packet[]): Promise<string[]> {
  if (selected.length === 0) return [];
  const tree = await listTree(root, tip);
  const atTip = tipIndex(tree.keys());
  const byId = new Map(all.map((packet) => [packet.id, packet]));
  const sources = selected.flatMap((packet) =>
    packet.planted.filter((path) => path.endsWith(".py")).map((path) => ({ packet: packet.id, path, sha: tree.get(`${PACKETS_DIR}/supplied/${packet.id}/${path}`)?.sha })),
  );
  const texts = await readBlobs(
    root,
    sources.flatMap((source) => (source.sha ? [source.sha] : [])),
  );
  const planted = new Map<string, Map<string, string>>();
  let at = 0;
  for (const source of sources) {
    const text = source.sha ? texts[at++] : undefined;
    if (text === undefined) continue;
    const files = planted.get(source.packet) ?? new Map<string, string>();
    planted.set(source.packet, files.set(source.path, text));
  }
  return selected.flatMap((packet) =>
    contentFindings({ packet, tip: atTip, planted: planted.get(packet.id) ?? new Map(), dependencyScope: dependencyScope(packet, byId) }).map((finding) => `${packet.file}: ${finding}`),
  );
}

/** The scope of every packet `packet` requires, directly or not ("**" for one without a scope). */
function dependencyScope(packet: Packet, byId: ReadonlyMap<string, Packet>): string[] {
  const seen = new Set<string>();
  const scope: string[] = [];
  const visit = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    const required = byId.get(id);
    if (!required) return;
    scope.push(...(required.allowedPaths ?? ["**"]));
    for (const next of required.requires) visit(next);
  };
  for (const id of packet.requires) visit(id);
  return scope;
}

/** The packets `run` would refuse under `[planning] require_assessment` (merged ones are never run again). */
async function unassessed(workspace: Workspace): Promise<Problem[]> {
  const config = workspace.config;
  if (!config || config.planning.requireAssessment === "none") return [];
  const { state } = await workspace.ledger.read();
  const open = workspace.queue.packets.filter((packet) => state.packets.get(packet.id)?.status.state !== "merged");
  const refusals = assessmentRefusals({ packets: open, tiers: config.tiers.map((tier) => tier.name), policy: config.planning.requireAssessment, ruling: (id) => state.packets.get(id)?.assessment });
  return refusals.map(({ packet, problem }) => ({ file: packet.file, message: problem }));
}

/** The files of the named packets: valid ones by id, invalid ones by their file-name prefix. */
function selectFiles(packets: readonly { id: string; file: string }[], problems: readonly { file: string }[], ids: readonly string[]): { files: Set<string>; unknown: string[] } {
  const files = new Set<string>();
  const unknown: string[] = [];
  for (const id of ids) {
    const valid = packets.find((packet) => packet.id === id);
    const invalid = problems.map((problem) => problem.file).filter((file) => file === `packets/${id}.toml` || file === `packets/${id}.md` || file.startsWith(`packets/${id}-`));
    if (valid) files.add(valid.file);
    for (const file of invalid) files.add(file);
    if (!valid && invalid.length === 0) unknown.push(id);
  }
  return { files, unknown };
}
