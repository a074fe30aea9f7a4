import { findRepoRoot, type GitResult } from "../git/repo.js";
import { packetsStatus } from "../packet/load.js";

/**
 * The first reads of a command that only shows (`status`, `plan`): the top
 * of the repository, then git status of packets/ (the slowest of them). The
 * CLI starts them before it loads the command's own modules, so the git
 * processes run while those ~40 ms of loading happen.
 */
export interface EarlyReads {
  root: Promise<string | undefined>;
  packetsStatus: Promise<GitResult>;
}

export function startEarlyReads(cwd: string): EarlyReads {
  const root = findRepoRoot(cwd);
  const status = root.then((top): Promise<GitResult> | GitResult => (top === undefined ? { ok: false, message: "not inside a git repository" } : packetsStatus(top)));
  status.catch(() => undefined); // awaited by the command; a failure is not left unhandled meanwhile
  return { root, packetsStatus: status };
}
