import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { listTree, readBlobs } from "../git/repo.js";
import type { PacketSource, SuppliedFile } from "./types.js";

export const PACKETS_DIR = "packets";
export const SUPPLIED_DIR = "packets/supplied";

export function isPacketFile(path: string): boolean {
  return /^packets\/[^/]+\.(toml|md)$/.test(path);
}

export interface QueueSources {
  sources: PacketSource[];
  /** Planted files at the tip, by packet id. */
  supplied: Map<string, SuppliedFile[]>;
  /** Working-tree packet files that differ from the committed queue: named, never used. */
  warnings: string[];
}

/**
 * Reads the queue from git at `tip`, never from the working directory: an
 * uncommitted packet is not in the queue, and uncommitted edits are ignored.
 */
export async function readQueue(root: string, tip: string, branch: string): Promise<QueueSources> {
  // One listing of packets/ (files with their blob ids) and one read of every packet file's blob.
  const tree = await listTree(root, tip, PACKETS_DIR);
  const files = [...tree.keys()].filter(isPacketFile).sort();
  const texts = await readBlobs(
    root,
    files.map((file) => tree.get(file)?.sha ?? ""),
  );
  const sources: PacketSource[] = [];
  files.forEach((file, index) => {
    const text = texts[index];
    if (text !== undefined) sources.push({ file, text });
  });
  const warnings = await compareWorkingTree(root, sources, branch);
  const supplied = new Map<string, SuppliedFile[]>();
  for (const [path, entry] of tree) {
    const match = /^packets\/supplied\/([^/]+)\/(.+)$/.exec(path);
    if (!match?.[1] || !match[2]) continue;
    const files = supplied.get(match[1]) ?? [];
    files.push({ path: match[2], mode: entry.mode, sha: entry.sha });
    supplied.set(match[1], files);
  }
  return { sources, supplied, warnings };
}

async function compareWorkingTree(root: string, sources: PacketSource[], branch: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(join(root, PACKETS_DIR));
  } catch {
    return [];
  }
  const committed = new Map(sources.map((source) => [source.file, source.text]));
  const warnings: string[] = [];
  for (const name of names.sort()) {
    const file = `${PACKETS_DIR}/${name}`;
    if (!isPacketFile(file)) continue;
    let text: string;
    try {
      // Read synchronously: a promise per file costs four thread-pool round trips, which at 10,000 packets was over a second.
      text = readFileSync(join(root, file), "utf8");
    } catch {
      continue; // a directory or unreadable entry is not a packet
    }
    const version = committed.get(file);
    if (version === undefined) {
      warnings.push(`${file} is not committed on ${branch}, so it is not in the queue; commit it to queue it`);
    } else if (version !== text) {
      warnings.push(`${file} has uncommitted edits; the version committed on ${branch} is used`);
    }
  }
  return warnings;
}
