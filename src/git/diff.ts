import { atCommits } from "./memo.js";
import { gitReadObjects, gitRun, orThrow } from "./repo.js";

export type ChangeKind = "added" | "modified" | "deleted" | "type-changed";

export interface Change {
  kind: ChangeKind;
  path: string;
}

/** What changed between two commits, renames shown as a delete and an add. */
export async function changedPaths(cwd: string, from: string, to: string): Promise<Change[]> {
  const args = ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-status", "-z", from, to];
  const out = orThrow(cwd, await gitReadObjects(cwd, [from, to], args), args);
  const parts = out.split("\0").filter((part) => part !== "");
  const changes: Change[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i] ?? "";
    const path = parts[i + 1] ?? "";
    const kind: ChangeKind = status === "A" ? "added" : status === "D" ? "deleted" : status === "T" ? "type-changed" : "modified";
    changes.push({ kind, path });
  }
  return changes;
}

/** The unified diff between two commits (optionally limited to paths). */
export async function diffText(cwd: string, from: string, to: string, options: { context?: number; paths?: string[]; exclude?: string[] } = {}): Promise<string> {
  const positive = options.paths?.length ? options.paths : options.exclude?.length ? ["."] : [];
  const pathspec = [...positive, ...(options.exclude ?? []).map((path) => `:(exclude,top)${path}`)];
  const args = ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", `--unified=${options.context ?? 3}`, from, to, ...(pathspec.length ? ["--", ...pathspec] : [])];
  return (await atCommits(cwd, [from, to], args, async () => orThrow(cwd, await gitReadObjects(cwd, [from, to], args), args))) ?? "";
}

export async function diffStat(cwd: string, from: string, to: string): Promise<string> {
  return gitRun(cwd, ["diff", "--no-ext-diff", "--no-textconv", "--stat", "--no-color", from, to]);
}
