import { objectId, readFileAt, resolveCommit } from "../git/repo.js";
import type { Packet } from "../packet/types.js";

/** The spec a packet was cut from, as pinned (spec_commit:spec_path), or why it cannot be read at all. */
export async function pinnedSpec(root: string, packet: Packet): Promise<{ ok: true; commit: string; text: string } | { ok: false; problem: string }> {
  const commit = await resolveCommit(root, packet.specCommit);
  if (!commit) return { ok: false, problem: `spec_commit ${packet.specCommit} is not a commit in this repository; re-cut the packet from an existing commit` };
  const text = await readFileAt(root, commit, packet.specPath);
  if (text === undefined) return { ok: false, problem: `spec_path ${packet.specPath} does not exist at spec_commit ${commit.slice(0, 10)}; fix spec_path or spec_commit` };
  return { ok: true, commit, text };
}

/**
 * The spec must not have moved since the packet was cut from it. Fails
 * closed: an unknown commit or a missing spec file is drift too.
 */
export async function checkSpecDrift(root: string, packet: Packet, tip: string): Promise<string | undefined> {
  // The usual case in two reads: the spec's blob at spec_commit and at the tip are one object (equal bytes).
  // spec_commit is hex (checked by lint), so it cannot be read as an option.
  const [pinnedBlob, tipBlob] = await Promise.all([objectId(root, `${packet.specCommit}^{commit}:${packet.specPath}`), objectId(root, `${tip}:${packet.specPath}`)]);
  if (pinnedBlob && pinnedBlob === tipBlob) return undefined;
  const pinned = await pinnedSpec(root, packet);
  if (!pinned.ok) return pinned.problem;
  const now = await readFileAt(root, tip, packet.specPath);
  if (now === undefined) return `${packet.specPath} was deleted since spec_commit ${pinned.commit.slice(0, 10)}; re-cut the packet against the current spec`;
  if (now !== pinned.text) {
    return `${packet.specPath} changed since the packet was cut from ${pinned.commit.slice(0, 10)} (target is at ${tip.slice(0, 10)}); re-cut the packet against the current spec and update spec_commit`;
  }
  return undefined;
}
