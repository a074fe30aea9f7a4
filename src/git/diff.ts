import { BINARY_PATHSPECS } from "./binary.js";
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

/**
 * The unified diff between two commits (optionally limited to paths). With `text`, every file is diffed as
 * text, whatever its attributes (`-diff`, `binary`) or its bytes (a NUL) say: what the tamper gate reads.
 */
export async function diffText(cwd: string, from: string, to: string, options: { context?: number; paths?: string[]; exclude?: string[]; pathspecs?: string[]; text?: boolean } = {}): Promise<string> {
  const positive = options.paths?.length ? options.paths : options.exclude?.length || options.pathspecs?.length ? ["."] : [];
  const pathspec = [...positive, ...(options.exclude ?? []).map((path) => `:(exclude,top)${path}`), ...(options.pathspecs ?? [])];
  const args = [
    "diff",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--no-color",
    ...(options.text ? ["--text"] : []),
    `--unified=${options.context ?? 3}`,
    from,
    to,
    ...(pathspec.length ? ["--", ...pathspec] : []),
  ];
  return (await atCommits(cwd, [from, to], args, async () => orThrow(cwd, await gitReadObjects(cwd, [from, to], args), args))) ?? "";
}

export async function diffStat(cwd: string, from: string, to: string): Promise<string> {
  return gitRun(cwd, ["diff", "--no-ext-diff", "--no-textconv", "--stat", "--no-color", from, to]);
}

/**
 * The diff a person or the reviewer reads: every file as text whatever its attributes or bytes say (a
 * `-diff` line or a NUL byte cannot hide a change), except files of binary types, which show as
 * "Binary files differ".
 */
export async function reviewableDiff(cwd: string, from: string, to: string): Promise<string> {
  const [text, binary] = await Promise.all([
    diffText(cwd, from, to, { text: true, pathspecs: BINARY_PATHSPECS.map((spec) => spec.replace(":(glob,icase)", ":(exclude,glob,icase)")) }),
    diffText(cwd, from, to, { paths: BINARY_PATHSPECS }),
  ]);
  return `${text}${binary}`;
}
