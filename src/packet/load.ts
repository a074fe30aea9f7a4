import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type GitResult, gitReadAside, listTree, objectId, readBlobs } from "../git/repo.js";
import { parseStatusV2 } from "../git/status.js";
import { codeVersion, queueCacheKey, readQueueCache, writeQueueCache } from "./queue-cache.js";
import type { PacketSet } from "./rules.js";
import type { PacketContext, PacketSource, SuppliedFile } from "./types.js";

export const PACKETS_DIR = "packets";
export const SUPPLIED_DIR = "packets/supplied";

export function isPacketFile(path: string): boolean {
  return /^packets\/[^/]+\.(toml|md)$/.test(path);
}

export interface LoadedQueue {
  queue: PacketSet;
  /** Working-tree packet files that differ from the committed queue: named, never used. */
  warnings: string[];
}

/**
 * Reads and validates the queue from git at `tip`, never from the working
 * directory: an uncommitted packet is not in the queue, and uncommitted edits
 * are ignored (but named). A queue whose inputs are unchanged since the last
 * read comes from the queue cache instead of being read and parsed again,
 * unless the caller decides on it (`run`, `approve`…): the cache has no hash
 * chain of its own, so a forged one must never widen a packet's scope. Those
 * reads still leave a fresh cache for the next one.
 */
export async function loadQueue(
  root: string,
  tip: string,
  branch: string,
  context: PacketContext,
  options: { trustCache: boolean } = { trustCache: true },
  probe: QueueProbe = probeQueue(root, tip, branch, context),
): Promise<LoadedQueue> {
  const key = await probe.key;
  // The status runs while the cache is parsed (a read that blocks, ~0.1 s at 10,000 packets); what it says decides whether the cache is used.
  const candidate = options.trustCache && key ? readQueueCache(root, key) : undefined;
  const known = await probe.warnings;
  if (candidate && known) return { queue: candidate, warnings: known };
  const { sources, supplied } = await readQueueSources(root, tip);
  let names = await probe.changed;
  if (!names) {
    try {
      names = (await readdir(join(root, PACKETS_DIR))).map((name) => `${PACKETS_DIR}/${name}`);
    } catch {
      names = [];
    }
  }
  const warnings = compareFiles(root, names, new Map(sources.map((source) => [source.file, source.text])), branch);
  // Imported only when the queue is parsed: a command served from a cache never loads the parser.
  const { validatePackets } = await import("./rules.js");
  const queue = validatePackets(sources, { ...context, supplied });
  if (key) writeQueueCache(root, key, queue);
  return { queue, warnings };
}

/**
 * What the queue at the tip is made of, found without reading it: the key
 * of everything it is computed from, and the warnings for working-tree
 * packet files, each a promise so a caller can work while git answers.
 */
export interface QueueProbe {
  /** The queue cache's key; undefined when the tip has no packets/ tree. */
  key: Promise<string | undefined>;
  /** The packet files `packetsStatus` names; undefined when the checkout is not at the tip (another branch, or the target not checked out: then every file must be read). */
  changed: Promise<string[] | undefined>;
  /** The working-tree warnings, when `changed` could be known without reading the queue: only the named files are compared. */
  warnings: Promise<string[] | undefined>;
}

export function probeQueue(root: string, tip: string, branch: string, context: PacketContext, status: Promise<GitResult> = packetsStatus(root)): QueueProbe {
  const key = objectId(root, `${tip}:${PACKETS_DIR}`).then((tree) => (tree ? queueCacheKey(tree, context, codeVersion()) : undefined));
  const changed = status.then((result) => (result.ok ? statusPaths(result.out, tip) : undefined));
  const warnings = changed.then(async (names) => {
    if (!names || names.some((file) => file.includes("\n"))) return undefined;
    const files = names.filter(isPacketFile);
    const texts = await readBlobs(
      root,
      files.map((file) => `${tip}:${file}`),
    );
    const committed = new Map<string, string>();
    files.forEach((file, index) => {
      const text = texts[index];
      if (text !== undefined) committed.set(file, text);
    });
    return compareFiles(root, files, committed, branch);
  });
  // Each is awaited by the caller that needs it; a failure is not left unhandled meanwhile.
  for (const promise of [key, changed, warnings]) promise.catch(() => undefined);
  return { key, changed, warnings };
}

/** Every packet file at the tip and the planted files by packet id: one listing of packets/ and one read of every packet file's blob. */
export async function readQueueSources(root: string, tip: string): Promise<{ sources: PacketSource[]; supplied: Map<string, SuppliedFile[]> }> {
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
  return { sources, supplied: suppliedByPacket([...tree].map(([path, entry]) => ({ path, mode: entry.mode, sha: entry.sha }))) };
}

/** Pure: the planted files among `entries` (repository paths under `packets/supplied/<ID>/`), by packet id; anything else is left out. */
export function suppliedByPacket(entries: Iterable<{ path: string; mode: string; sha: string }>): Map<string, SuppliedFile[]> {
  const supplied = new Map<string, SuppliedFile[]>();
  for (const entry of entries) {
    const match = /^packets\/supplied\/([^/]+)\/(.+)$/.exec(entry.path);
    if (!match?.[1] || !match[2]) continue;
    const files = supplied.get(match[1]) ?? [];
    files.push({ path: match[2], mode: entry.mode, sha: entry.sha });
    supplied.set(match[1], files);
  }
  return supplied;
}

/** The warnings for working-tree files `names` (repository paths) against the committed texts. */
function compareFiles(root: string, names: readonly string[], committed: ReadonlyMap<string, string>, branch: string): string[] {
  const warnings: string[] = [];
  for (const file of [...names].sort()) {
    if (!isPacketFile(file)) continue;
    let text: string;
    try {
      // Read synchronously: a promise per file costs four thread-pool round trips, which at 10,000 packets was over a second.
      text = readFileSync(join(root, file), "utf8");
    } catch {
      continue; // a directory, a deleted or unreadable entry is not a packet
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

/**
 * `git status` of packets/: it names the files there that may differ from
 * the tip (changed, staged, untracked or ignored), found through the
 * index's stat cache instead of reading every file; only a filter, each
 * file named is still compared byte for byte. At 10,000 packet files it is
 * the slowest of the queue's reads (~50 ms), and it needs only the
 * repository: it runs beside the directory's other git calls, so a command
 * can start it as soon as it knows the repository, before it reads the
 * config and the tip. A command that has written to the checkout (a run
 * that has landed, `status` bringing a checkout forward) starts another.
 */
export function packetsStatus(root: string): Promise<GitResult> {
  return gitReadAside(root, ["--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=matching", "--", PACKETS_DIR]);
}

/** Pure: the paths `git status --porcelain=v2 -z --branch` names (a rename's both), or undefined when its HEAD is not `tip`. */
export function statusPaths(out: string, tip: string): string[] | undefined {
  const status = parseStatusV2(out);
  if (status.oid !== tip) return undefined;
  return status.entries.flatMap((entry) => (entry.from === undefined ? [entry.path] : [entry.path, entry.from])).filter((path) => path !== "");
}
