import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitRun, gitTry, missingCommits } from "./repo.js";

/** Where held work is kept in git: one ref per packet held for a person. */
export const HELD_REFS = "refs/factory/held/";

/** Where a worker's gated attempt waits for the fleet's lander (merge/fleet-landing.ts): one ref per packet. */
export const LANDING_REFS = "refs/factory/landing/";

/**
 * A held attempt as git keeps it, beside the ledger: what cannot be re-derived
 * from git otherwise (which attempt, which version of the packet, what the
 * gates and the reviewer said: the attempt's own ledger events).
 */
export interface HeldRecord {
  packet: string;
  sha256: string;
  attempt: number;
  commit: string;
  fork: string;
  tree: string;
  /** The attempt's ledger events (planted, gates, review), without their stamps. */
  events: Record<string, unknown>[];
}

/**
 * Keeps a held attempt under refs/factory/held/<ID>: a commit whose parent is
 * the held commit (so it stays reachable whatever happens to the task branch
 * or the ledger) and whose tree holds `held.json`.
 */
export async function keepHeld(root: string, record: HeldRecord): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "factory-held-"));
  let tree: string;
  try {
    writeFileSync(join(scratch, "held.json"), `${JSON.stringify(record, null, 2)}\n`);
    const blob = (await gitRun(root, ["hash-object", "-w", join(scratch, "held.json")])).trim();
    // A tree of that one file, built in an index of its own: the user's index is never touched.
    const indexFile = join(scratch, "index");
    await gitRun(root, ["update-index", "--add", "--cacheinfo", `100644,${blob},held.json`], { indexFile });
    tree = (await gitRun(root, ["write-tree"], { indexFile })).trim();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const commit = (await gitRun(root, ["commit-tree", tree, "-p", record.commit, "-m", `factory: ${record.packet} held for a person (attempt ${record.attempt})`], { identity: true })).trim();
  await gitRun(root, ["update-ref", "-m", "factory: held", `${HELD_REFS}${record.packet}`, commit]);
}

/** Forgets a packet's held attempt (merged, rejected, reset): its ref goes (on the shared remote too); nothing when there is none. */
export async function dropHeld(root: string, packet: string, remote?: string): Promise<void> {
  await gitTry(root, ["update-ref", "-d", `${HELD_REFS}${packet}`]);
  // Best effort: a ref left on the remote names a commit the ledger no longer holds for a person, and is never landed by itself.
  if (remote) await gitTry(root, ["push", "--quiet", "--no-verify", remote, `:${HELD_REFS}${packet}`]);
}

/**
 * With a shared remote: the held attempt's ref is pushed there, so `approve`
 * (and `diff`) work from any clone; the remote's own refusal is returned.
 */
export async function shareHeld(root: string, packet: string, remote: string): Promise<string | undefined> {
  const pushed = await gitTry(root, ["push", "--quiet", "--no-verify", "--force", remote, `${HELD_REFS}${packet}:${HELD_REFS}${packet}`]);
  return pushed.ok ? undefined : pushed.message.trim().split("\n").slice(-2).join(" / ");
}

/** With a shared remote: every held attempt's ref, as the remote has them (an approval on another clone fetches them first). */
export async function fetchHeld(root: string, remote: string): Promise<string | undefined> {
  // --no-write-fetch-head: FETCH_HEAD's time stays that of a fetch of the target (status reads it as this clone's view).
  const fetched = await gitTry(root, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, `+${HELD_REFS}*:${HELD_REFS}*`]);
  return fetched.ok ? undefined : fetched.message.trim().split("\n").slice(-2).join(" / ");
}

/** Every held attempt git keeps; one whose record cannot be read (or whose parent is not its commit) is left out. */
export async function readHeld(root: string): Promise<HeldRecord[]> {
  const refs = (await gitRun(root, ["for-each-ref", "--format=%(refname)%00%(objectname)%00%(parent)", HELD_REFS])).split("\n").filter(Boolean);
  const held: HeldRecord[] = [];
  for (const line of refs) {
    const [ref = "", object = "", parent = ""] = line.split("\0");
    const text = await gitTry(root, ["cat-file", "blob", `${object}:held.json`]);
    if (!text.ok) continue;
    try {
      const record = JSON.parse(text.out) as HeldRecord;
      if (record.packet === ref.slice(HELD_REFS.length) && record.commit === parent && Array.isArray(record.events)) held.push(record);
    } catch {
      // not a record the factory wrote: ignored
    }
  }
  return held;
}

/**
 * Makes sure this clone has the given held commits: when one is missing and
 * there is a shared remote, the remote's held attempts are fetched (a packet
 * held by another clone's worker). Returns the commits still missing, with
 * what to run to bring them.
 */
export async function bringHeld(root: string, remote: string | undefined, commits: readonly string[]): Promise<{ missing: string[]; remedy: string }> {
  let missing = await missingCommits(root, commits);
  let unfetched: string | undefined;
  if (missing.length > 0 && remote) {
    unfetched = await fetchHeld(root, remote);
    if (!unfetched) missing = await missingCommits(root, commits);
  }
  const remedy = !remote
    ? "run this on the clone that held it (no [target] remote is configured to fetch it from)"
    : unfetched
      ? `${remote}'s held attempts could not be fetched (${unfetched}); run this again once ${remote} can be reached, or on the clone that held it`
      : `${remote} does not hold it either: run this on the clone that held it, or \`git fetch ${remote} '${HELD_REFS}*:${HELD_REFS}*'\` once it is shared`;
  return { missing, remedy };
}
