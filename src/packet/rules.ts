import { formatKeyPath, locateKey } from "../toml/locate.js";
import { type Problem, sortProblems } from "../util/problem.js";
import { findCycles } from "./graph.js";
import { parsePacket } from "./parse.js";
import type { Packet, PacketContext, PacketSource } from "./types.js";

export interface PacketSet {
  /** Packets that passed every rule, in file order. */
  packets: Packet[];
  /** Packets that parsed (first of each id), including those with dependency problems: for `plan`. */
  parsed: Packet[];
  /** Ids of packet files with any problem, with the first one: they cannot run. */
  invalid: Map<string, { file: string; problem: string }>;
  /** Every problem in every packet, in file order. */
  problems: Problem[];
}

/**
 * Validates a whole queue: each file on its own, then the rules that need all
 * of them (unique ids, known dependencies, no cycles). A packet with any
 * problem is left out of `packets`.
 */
export function validatePackets(sources: readonly PacketSource[], context: PacketContext): PacketSet {
  const ordered = [...sources].sort((a, b) => a.file.localeCompare(b.file));
  const problems: Problem[] = [];
  const parsed: Packet[] = [];
  const textOf = new Map(ordered.map((source) => [source.file, source.text]));
  for (const source of ordered) {
    const result = parsePacket(source, context);
    if (result.ok) parsed.push(result.packet);
    else problems.push(...result.problems);
  }

  const bad = new Set<string>();
  const lineOf = (packet: Packet, key: (string | number)[]): number | undefined => {
    const text = textOf.get(packet.file) ?? "";
    const line = locateKey(packet.file.endsWith(".md") ? frontMatter(text) : text, key);
    return line === undefined ? undefined : line + (packet.file.endsWith(".md") ? 1 : 0);
  };
  const report = (packet: Packet, key: (string | number)[], message: string): void => {
    bad.add(packet.file);
    const line = lineOf(packet, key);
    problems.push({ file: packet.file, ...(line === undefined ? {} : { line }), key: formatKeyPath(key), message });
  };

  const firstById = new Map<string, Packet>();
  for (const packet of parsed) {
    const first = firstById.get(packet.id);
    if (first) report(packet, ["id"], `duplicate packet id "${packet.id}" (also in ${first.file})`);
    else firstById.set(packet.id, packet);
  }
  // Ids that exist at all, valid or not, so a broken dependency is not also called unknown.
  const known = new Set([...firstById.keys(), ...idsOfInvalid(ordered, parsed).map(([id]) => id)]);
  for (const packet of parsed) {
    packet.requires.forEach((dependency, index) => {
      if (!known.has(dependency)) report(packet, ["requires", index], `depends on unknown packet "${dependency}"`);
    });
  }
  // Planted files whose packet does not exist would never be planted: a typo in a folder or a packet removed.
  for (const id of [...(context.supplied?.keys() ?? [])].sort()) {
    if (!known.has(id))
      problems.push({ file: `packets/supplied/${id}/`, message: `no packet has id "${id}", so these planted files are never used: rename the folder to its packet's id, or remove it` });
  }
  for (const cycle of findCycles([...firstById.values()])) {
    for (const id of cycle) {
      const packet = firstById.get(id);
      if (packet) report(packet, ["requires"], `dependency cycle: ${[...cycle, cycle[0]].join(" → ")}`);
    }
  }

  const invalid = new Map<string, { file: string; problem: string }>();
  const badParsed: [string, string][] = parsed.filter((packet) => bad.has(packet.file)).map((packet) => [packet.id, packet.file]);
  for (const [id, file] of [...idsOfInvalid(ordered, parsed), ...badParsed]) {
    const first = problems.find((problem) => problem.file === file);
    if (!invalid.has(id)) invalid.set(id, { file, problem: first ? first.message : "invalid" });
  }
  return {
    packets: parsed.filter((packet) => !bad.has(packet.file)),
    parsed: [...firstById.values()],
    invalid,
    problems: sortProblems(problems),
  };
}

/** [id, file] of the files that did not parse, where an id can still be read from them. */
function idsOfInvalid(sources: readonly PacketSource[], parsed: readonly Packet[]): [string, string][] {
  const parsedFiles = new Set(parsed.map((packet) => packet.file));
  const ids: [string, string][] = [];
  for (const source of sources) {
    if (parsedFiles.has(source.file)) continue;
    const match = /^\s*id\s*=\s*["']([^"']+)["']/m.exec(source.text);
    if (match?.[1]) ids.push([match[1], source.file]);
  }
  return ids;
}

function frontMatter(text: string): string {
  const match = /^\+\+\+[ \t]*\r?\n([\s\S]*?)\r?\n\+\+\+/.exec(text);
  return match?.[1] ?? "";
}
