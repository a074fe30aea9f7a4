import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { STATE_DIR } from "../ledger/scan.js";
import { allFullIds } from "./memo.js";
import { gitRun, gitTry, resolveCommit } from "./repo.js";

/** A packet version that git says landed: a commit on the target with its Factory-Packet trailers. */
export interface Landed {
  id: string;
  sha256: string;
  commit: string;
}

const TRAILERS_FORMAT = "--format=%H%x1f%(trailers:key=Factory-Packet,valueonly,separator=%x2c)%x1f%(trailers:key=Factory-Packet-Sha256,valueonly,separator=%x2c)%x1e";

/**
 * Every packet version the history of `ref` carries by its `Factory-Packet`
 * and `Factory-Packet-Sha256` trailers: the record git can vouch for, with no
 * ledger (a fresh clone, a deleted `.factory/state`, a crash between moving
 * the target and recording it). Newest first.
 *
 * With a `cacheFile`, the answer for the commit it covered last is kept
 * there, and a later lookup reads only the commits added since (when that
 * commit is still in `ref`'s history; otherwise the whole history again): a
 * landing costs the commits since the last one, not the target's whole
 * history. The cache is a copy of what git says, never a record of its own:
 * a missing or unreadable one means a whole-history read.
 */
export async function landedPackets(root: string, ref: string, options: { cacheFile?: string } = {}): Promise<Landed[]> {
  if (!options.cacheFile) return landedIn(root, [ref]);
  // A full id is the commit itself (status and the brief pass the tip so): no question to git.
  const tip = allFullIds([ref]) ? ref : await resolveCommit(root, ref);
  if (!tip) return landedIn(root, [ref]);
  const cached = readCache(options.cacheFile);
  if (cached?.tip === tip) return cached.landed;
  const extends_ = cached && (await gitTry(root, ["merge-base", "--is-ancestor", cached.tip, tip])).ok;
  const landed = cached && extends_ ? [...(await landedIn(root, [tip, `^${cached.tip}`])), ...cached.landed] : await landedIn(root, [tip]);
  writeCache(options.cacheFile, { tip, landed });
  return landed;
}

/** Where a repository's lookups keep the cache of what landed: beside the ledger, out of every sandbox's sight. */
export function landedCacheFile(root: string): string {
  return join(root, STATE_DIR, "landed.cache.json");
}

async function landedIn(root: string, range: string[]): Promise<Landed[]> {
  const out = await gitRun(root, ["log", "--grep=^Factory-Packet:", TRAILERS_FORMAT, ...range, "--"]);
  return parseLanded(out);
}

/** Pure: the landed versions in `git log`'s output in the trailers format above. */
export function parseLanded(out: string): Landed[] {
  const landed: Landed[] = [];
  for (const record of out.split("\x1e")) {
    const [commit, id, sha256] = record
      .trim()
      .split("\x1f")
      .map((part) => part.trim());
    if (commit && id && sha256) landed.push({ id, sha256, commit });
  }
  return landed;
}

interface CacheFile {
  version: 1;
  tip: string;
  landed: Landed[];
}

function readCache(file: string): CacheFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<CacheFile>;
    if (parsed.version !== 1 || typeof parsed.tip !== "string" || !/^[0-9a-f]{40,64}$/.test(parsed.tip) || !Array.isArray(parsed.landed)) return undefined;
    if (!parsed.landed.every((entry) => typeof entry?.id === "string" && typeof entry.sha256 === "string" && typeof entry.commit === "string")) return undefined;
    return parsed as CacheFile;
  } catch {
    return undefined;
  }
}

/**
 * Written whole to a temporary name, then renamed: a reader sees the old cache or the new one. Only
 * where its directory exists: a repository where the factory keeps no state gets no file from a lookup.
 */
function writeCache(file: string, cache: Omit<CacheFile, "version">): void {
  if (!existsSync(dirname(file))) return;
  try {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ version: 1, ...cache }));
    renameSync(temporary, file);
  } catch {
    // a cache that cannot be written costs the next lookup a whole-history read, nothing else
  }
}

/** Pure: the commit that landed this exact packet version, if any (the newest, when it landed more than once). */
export function landedVersion(landed: readonly Landed[], id: string, sha256: string): Landed | undefined {
  return landedIndex(landed)(id, sha256);
}

/** Pure: `landedVersion` for many lookups (a whole queue against a long history): indexed once, the newest landing of each version. */
export function landedIndex(landed: readonly Landed[]): (id: string, sha256: string) => Landed | undefined {
  const index = new Map<string, Landed>();
  for (const entry of landed) {
    const key = `${entry.id}\0${entry.sha256}`;
    if (!index.has(key)) index.set(key, entry);
  }
  return (id, sha256) => index.get(`${id}\0${sha256}`);
}
