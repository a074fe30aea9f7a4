import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PacketSet } from "./rules.js";
import type { Packet, PacketContext } from "./types.js";

/**
 * The validated queue, kept beside the ledger (`.factory/state/queue.cache.json`)
 * under a key of everything it was computed from: the tree of `packets/` at
 * the tip (every packet file and planted file, by content), the parts of the
 * config packets are checked against, and the factory's own code. A queue
 * whose key matches is not read from git or parsed again; any other key
 * rebuilds it. One entry: the last queue read.
 */
export const QUEUE_CACHE_FILE = "queue.cache.json";
const STATE_DIR = ".factory/state";

interface CacheFile {
  format: "factory-queue-cache";
  key: string;
  /** Every packet once; `packets` and `parsed` index into it. */
  all: Packet[];
  packets: number[];
  parsed: number[];
  invalid: [string, { file: string; problem: string }][];
  problems: PacketSet["problems"];
}

/** Pure: the key of a queue computed from these inputs. */
export function queueCacheKey(packetsTree: string, context: PacketContext, code: string): string {
  const { supplied: _supplied, ...rest } = context; // planted files are in the tree already
  return createHash("sha256")
    .update(JSON.stringify({ packetsTree, context: rest, code }))
    .digest("hex");
}

let codeId: string | undefined;

/**
 * The factory's code as it is installed: every module's path, size and mtime,
 * so a rebuilt or upgraded factory never trusts a queue an older one parsed.
 * Only the modules that run (`.js`, or `.ts` where the source runs as it is):
 * declarations and source maps change with them, and a walk that stats only
 * modules costs a third of one that stats every file.
 */
export function codeVersion(): string {
  codeId ??= codeVersionOf(dirname(dirname(fileURLToPath(import.meta.url))));
  return codeId;
}

/** The version of the code under `top` (see `codeVersion`). */
export function codeVersionOf(top: string): string {
  const hash = createHash("sha256");
  const walk = (dir: string, at: string): void => {
    // Names compared as strings, not by locale: the same order on every machine.
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, `${at}${entry.name}/`);
      else if (/(?<!\.d)\.[jt]s$/.test(entry.name)) {
        const stats = statSync(path);
        hash.update(`${at}${entry.name} ${stats.size} ${stats.mtimeMs}\n`);
      }
    }
  };
  walk(top, "");
  return hash.digest("hex");
}

function cachePath(root: string): string {
  return join(root, STATE_DIR, QUEUE_CACHE_FILE);
}

/** The cached queue for `key`, or undefined (no cache, another key, or a file that cannot be read). */
export function readQueueCache(root: string, key: string): PacketSet | undefined {
  let file: CacheFile;
  try {
    file = JSON.parse(readFileSync(cachePath(root), "utf8")) as CacheFile;
  } catch {
    return undefined;
  }
  if (file.format !== "factory-queue-cache" || file.key !== key) return undefined;
  const at = (index: number): Packet => file.all[index] as Packet;
  return { packets: file.packets.map(at), parsed: file.parsed.map(at), invalid: new Map(file.invalid), problems: file.problems };
}

/**
 * Saves the queue under `key`, only where the factory keeps state already (a
 * repository that has never run keeps no file it did not ask for); best
 * effort (a read-only state directory only costs the next read its parse).
 */
export function writeQueueCache(root: string, key: string, set: PacketSet): void {
  const path = cachePath(root);
  if (!existsSync(dirname(path))) return;
  const all: Packet[] = [];
  const index = new Map<Packet, number>();
  const indexOf = (packet: Packet): number => {
    let at = index.get(packet);
    if (at === undefined) {
      at = all.push(packet) - 1;
      index.set(packet, at);
    }
    return at;
  };
  const file: CacheFile = {
    format: "factory-queue-cache",
    key,
    all,
    packets: set.packets.map(indexOf),
    parsed: set.parsed.map(indexOf),
    invalid: [...set.invalid],
    problems: set.problems,
  };
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(file));
    renameSync(temporary, path);
  } catch {
    rmSync(temporary, { force: true });
  }
}
