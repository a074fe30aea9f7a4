import { gitTry } from "./repo.js";

/**
 * A landing undone on the target after it landed (issue 40 §3): the classic way is a person's `git commit`
 * of the index the checkout had before the landing moved it (git told them to remove the landing's
 * index.lock, and they did), which puts every file the packet changed back as it was. The ledger still
 * says merged; a packet that needs it blocks, and nothing said why. Any factory command can look: one
 * `git log` of the target's recent first-parent history.
 */
export interface UndoneLanding {
  packet: string;
  /** The landing commit. */
  commit: string;
  /** The files it changed, every one back at the target's tip as it was before it. */
  paths: string[];
  /** The first later commit that put one of them back. */
  by: { commit: string; subject: string };
}

/** One commit of the log: its id, subject, Factory-Packet trailers, and per changed path its blob before and after ("" when absent). */
export interface LoggedCommit {
  commit: string;
  subject: string;
  packets: string[];
  changes: Map<string, { before: string; after: string }>;
}

/** How far back the target's history is read: an undo follows its landing closely (the next commit, usually). */
const WINDOW = 50;

/** The landings of `merged` packets among the target's recent commits that the tip no longer carries. */
export async function undoneLandings(root: string, branch: string, merged: ReadonlySet<string>): Promise<UndoneLanding[]> {
  if (merged.size === 0) return [];
  const format = "%x01%H%x02%s%x02%(trailers:key=Factory-Packet,valueonly,separator=%x2C)";
  const log = await gitTry(root, ["log", "--first-parent", "-z", "--raw", "--no-renames", "--no-abbrev", `-n${WINDOW}`, `--format=${format}`, branch, "--"]);
  return log.ok ? findUndone(parseLog(log.out), merged) : [];
}

/** Pure: the output of that `git log`, newest first. */
export function parseLog(out: string): LoggedCommit[] {
  return out
    .split("\x01")
    .filter(Boolean)
    .map((record) => {
      const end = record.indexOf("\0");
      const [commit = "", subject = "", trailers = ""] = (end < 0 ? record : record.slice(0, end)).split("\x02");
      const fields =
        end < 0
          ? []
          : record
              .slice(end + 1)
              .replace(/^\n/, "")
              .split("\0");
      const changes = new Map<string, { before: string; after: string }>();
      for (let at = 0; at + 1 < fields.length; at += 2) {
        const [, , before, after] = (fields[at] ?? "").replace(/^:/, "").split(" ");
        const path = fields[at + 1];
        if (!path || before === undefined || after === undefined) continue;
        changes.set(path, { before: absent(before), after: absent(after) });
      }
      return {
        commit,
        subject,
        packets: trailers
          .split(",")
          .map((packet) => packet.trim())
          .filter(Boolean),
        changes,
      };
    });
}

function absent(id: string): string {
  return /^0+$/.test(id) ? "" : id;
}

/**
 * Pure: each landing of a merged packet (newest first in `log`) whose every changed path was later set back
 * to its blob from before the landing, and left so up to the tip; with the first later commit that did it.
 */
export function findUndone(log: readonly LoggedCommit[], merged: ReadonlySet<string>): UndoneLanding[] {
  const found: UndoneLanding[] = [];
  log.forEach((landing, at) => {
    const packet = landing.packets.find((id) => merged.has(id));
    if (!packet || landing.changes.size === 0) return;
    const later = log.slice(0, at); // newer commits, newest first
    let by: LoggedCommit | undefined;
    for (const [path, blobs] of landing.changes) {
      if (blobs.before === blobs.after) return;
      const last = later.find((commit) => commit.changes.has(path)); // the newest change to it is what the tip has
      if (!last || last.changes.get(path)?.after !== blobs.before) return;
      const first = [...later].reverse().find((commit) => commit.changes.has(path));
      if (first && (!by || later.indexOf(first) > later.indexOf(by))) by = first;
    }
    // A later packet that undoes it did so on purpose, through the gates: only a commit of no packet is said.
    if (by && by.packets.length === 0) found.push({ packet, commit: landing.commit, paths: [...landing.changes.keys()], by: { commit: by.commit, subject: by.subject } });
  });
  return found;
}

/** Pure: what a person reads about an undone landing, and the command that brings it back. */
export function describeUndone(undone: UndoneLanding, branch: string): string {
  const short = (sha: string): string => sha.slice(0, 10);
  const files = `${undone.paths.slice(0, 3).join(", ")}${undone.paths.length > 3 ? `, and ${undone.paths.length - 3} more` : ""}`;
  return (
    `${undone.packet} landed as ${short(undone.commit)}, but ${branch} no longer has it: every file it changed (${files}) is back as it was before it, ` +
    `undone by ${short(undone.by.commit)} ("${undone.by.subject}"). To bring it back: git cherry-pick ${short(undone.commit)} ` +
    `(or, if ${short(undone.by.commit)} did nothing else, git revert ${short(undone.by.commit)}); if it was undone on purpose: factory acknowledge ${undone.packet}`
  );
}
