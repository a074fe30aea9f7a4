import { parsePacket } from "../packet/parse.js";
import { validatePackets } from "../packet/rules.js";
import type { Packet, PacketContext, PacketSource, SuppliedFile } from "../packet/types.js";
import { formatProblem } from "../util/problem.js";

/** What the factory made of one proposed packet file: the packet when it parsed, and what is wrong with it (nothing: it passed). */
export interface Judged {
  file: string;
  packet?: Packet;
  problems: string[];
}

export interface ProposalInput {
  /** The planner's packet files, named as in the repository (`packets/<ID>-<slug>.toml`). */
  proposals: readonly PacketSource[];
  /** The planner's planted files, by the id of the packet they belong to. */
  supplied: ReadonlyMap<string, readonly SuppliedFile[]>;
  /** The queue at the tip: its packet files and planted files. */
  existing: { sources: readonly PacketSource[]; supplied: ReadonlyMap<string, readonly SuppliedFile[]> };
  context: PacketContext;
  /** The spec the packets were cut from: its path and the full sha of its last commit. */
  spec: { path: string; commit: string };
}

/**
 * Pure: every proposal judged like a packet in the queue, without a model:
 * it parses and passes every rule of `lint` (also those that need the
 * queue: a dependency must exist, no cycle); it is pinned to the spec it was
 * cut from (`spec_path`, and `spec_commit` the full sha of its last commit);
 * and it repeats no id, file or goal of the queue or of an earlier proposal.
 * Whether its planted tests fail at the tip is judged by running them.
 */
export function judgeProposals(input: ProposalInput): Judged[] {
  const existing = input.existing.sources.map((source) => ({ source, parsed: parsePacket(source, { ...input.context, supplied: input.existing.supplied }) }));
  const takenIds = new Map(existing.flatMap(({ source, parsed }) => (parsed.ok ? [[parsed.packet.id, source.file] as const] : [])));
  const takenGoals = new Map(existing.flatMap(({ source, parsed }) => (parsed.ok ? [[goalKey(parsed.packet.goal), source.file] as const] : [])));
  const takenFiles = new Set(input.existing.sources.map((source) => source.file));
  const judged: Judged[] = [];
  for (const source of [...input.proposals].sort((a, b) => a.file.localeCompare(b.file))) {
    const problems: string[] = [];
    if (takenFiles.has(source.file)) problems.push(`${source.file} exists in the queue already`);
    const parsed = parsePacket(source, { ...input.context, supplied: input.supplied });
    if (!parsed.ok) {
      judged.push({ file: source.file, problems: [...problems, ...parsed.problems.map(formatProblem)] });
      continue;
    }
    const { packet } = parsed;
    const id = takenIds.get(packet.id);
    if (id) problems.push(`id "${packet.id}" is taken by ${id}`);
    const goal = takenGoals.get(goalKey(packet.goal));
    if (goal) problems.push(`goal "${packet.goal}" repeats ${goal}`);
    if (packet.specPath !== input.spec.path) problems.push(`spec_path is "${packet.specPath}", not the spec it was cut from (${input.spec.path})`);
    if (packet.specCommit !== input.spec.commit) problems.push(`spec_commit is "${packet.specCommit}", not the full sha of the spec's last commit (${input.spec.commit})`);
    takenIds.set(packet.id, source.file);
    takenGoals.set(goalKey(packet.goal), source.file);
    takenFiles.add(source.file);
    judged.push({ file: source.file, packet, problems });
  }
  // The rules across files (dependencies, cycles), on the queue with the proposals that passed so far.
  const passing = judged.filter((entry) => entry.packet && entry.problems.length === 0);
  const supplied = new Map([...input.existing.supplied, ...passing.flatMap((entry) => (entry.packet ? [[entry.packet.id, input.supplied.get(entry.packet.id) ?? []] as const] : []))]);
  const bySource = new Map(input.proposals.map((source) => [source.file, source]));
  const set = validatePackets([...input.existing.sources, ...passing.flatMap((entry) => bySource.get(entry.file) ?? [])], { ...input.context, supplied });
  for (const entry of passing) {
    entry.problems.push(...set.problems.filter((problem) => problem.file === entry.file).map(formatProblem));
  }
  return judged;
}

/** A goal as compared for repeats: case and spacing aside. */
function goalKey(goal: string): string {
  return goal.trim().replace(/\s+/g, " ").toLowerCase();
}
