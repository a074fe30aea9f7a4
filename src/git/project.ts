import { resolve } from "node:path";
import { trackingRef } from "./remote.js";
import { gitTry, resolveCommit } from "./repo.js";

/**
 * The project a shared ledger serves. A PostgreSQL database records it when
 * it is first bound (its history's root commit, the target branch, the
 * remote it lands on); a worker of another project, or of a fork landing on
 * another remote, is refused before it claims anything, naming both.
 */
export interface Project {
  /** The root commits of the target branch's history (one, unless unrelated histories were merged). */
  roots: readonly string[];
  branch: string;
  /** The remote's URL as `normalRemote` writes it; undefined for a ledger without `[target] remote`. */
  remote: string | undefined;
}

/**
 * Pure: a remote's URL as one project's clones all name it: no credentials,
 * no scheme, user or port, no trailing `.git` or slash, the host in lower
 * case (`git@github.com:acme/w.git` and `https://tok@GitHub.com/acme/w` are
 * both `github.com/acme/w`). A local path stays a path.
 */
export function normalRemote(url: string): string {
  const trimmed = url
    .trim()
    .replace(/\/+$/, "")
    .replace(/\.git$/, "");
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/:]+)(?::\d+)?(\/.*)?$/i.exec(trimmed);
  if (scheme && !trimmed.startsWith("file://")) return `${(scheme[1] ?? "").toLowerCase()}${scheme[2] ?? ""}`;
  const scp = /^(?:[^@/]+@)?([^/:]+):(?!\/)(.+)$/.exec(trimmed);
  if (scp) return `${(scp[1] ?? "").toLowerCase()}/${scp[2]}`;
  return trimmed.replace(/^file:\/\//, "");
}

/**
 * The project this repository is, as a shared ledger records it: the root
 * commits of the target branch (the remote's, where it lands on a remote),
 * the branch, and the remote's URL.
 */
export async function projectOf(root: string, branch: string, remote: string | undefined): Promise<Project> {
  const ref = remote && (await resolveCommit(root, trackingRef(remote, branch))) ? trackingRef(remote, branch) : `refs/heads/${branch}`;
  const roots = await gitTry(root, ["rev-list", "--max-parents=0", ref, "--"]);
  const url = remote ? await gitTry(root, ["remote", "get-url", remote]) : undefined;
  return {
    roots: roots.ok ? roots.out.split("\n").filter(Boolean) : [],
    branch,
    // A remote named by a relative path is the same remote from every clone only as an absolute one.
    remote: url?.ok ? normalRemote(/^[a-z][a-z0-9+.-]*:\/\/|^[^/]+:/i.test(url.out.trim()) ? url.out.trim() : resolve(root, url.out.trim())) : undefined,
  };
}
