import { gitRun } from "./repo.js";

/** A packet version that git says landed: a commit on the target with its Factory-Packet trailers. */
export interface Landed {
  id: string;
  sha256: string;
  commit: string;
}

/**
 * Every packet version the history of `ref` carries by its `Factory-Packet`
 * and `Factory-Packet-Sha256` trailers: the record git can vouch for, with no
 * ledger (a fresh clone, a deleted `.factory/state`, a crash between moving
 * the target and recording it). Newest first.
 */
export async function landedPackets(root: string, ref: string): Promise<Landed[]> {
  const out = await gitRun(root, [
    "log",
    "--grep=^Factory-Packet:",
    "--format=%H%x1f%(trailers:key=Factory-Packet,valueonly,separator=%x2c)%x1f%(trailers:key=Factory-Packet-Sha256,valueonly,separator=%x2c)%x1e",
    ref,
  ]);
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
