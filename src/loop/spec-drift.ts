import { readFileAt, resolveCommit } from "../git/repo.js";
import type { Packet } from "../packet/types.js";

/**
 * The spec must not have moved since the packet was cut from it. Fails
 * closed: an unknown commit or a missing spec file is drift too.
 */
export async function checkSpecDrift(root: string, packet: Packet, tip: string): Promise<string | undefined> {
  const pinned = await resolveCommit(root, packet.specCommit);
  if (!pinned) return `spec_commit ${packet.specCommit} is not a commit in this repository; re-cut the packet from an existing commit`;
  const then = await readFileAt(root, pinned, packet.specPath);
  if (then === undefined) return `spec_path ${packet.specPath} does not exist at spec_commit ${pinned.slice(0, 10)}`;
  const now = await readFileAt(root, tip, packet.specPath);
  if (now === undefined) return `${packet.specPath} was deleted since spec_commit ${pinned.slice(0, 10)}; re-cut the packet against the current spec`;
  if (now !== then) {
    return `${packet.specPath} changed since the packet was cut from ${pinned.slice(0, 10)} (target is at ${tip.slice(0, 10)}); re-cut the packet against the current spec and update spec_commit`;
  }
  return undefined;
}
