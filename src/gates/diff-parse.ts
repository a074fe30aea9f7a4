/** One file's side of a unified diff: the lines it adds (new numbering) and removes (old numbering). */
export interface FileDiff {
  path: string;
  /** Path before the change, for deletions; same as path otherwise. */
  oldPath: string;
  added: { line: number; text: string }[];
  removed: { line: number; text: string }[];
  isNew: boolean;
  isDeleted: boolean;
}

/** Pure: parses `git diff --no-renames` output (any context size). */
export function parseUnifiedDiff(text: string): FileDiff[] {
  const files: FileDiff[] = [];
  let current: FileDiff | undefined;
  let oldLine = 0;
  let newLine = 0;
  for (const line of text.split("\n")) {
    const header = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (header) {
      current = { path: header[2] ?? "", oldPath: header[1] ?? "", added: [], removed: [], isNew: false, isDeleted: false };
      files.push(current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith("new file mode")) current.isNew = true;
    else if (line.startsWith("deleted file mode")) current.isDeleted = true;
    else if (line.startsWith("--- ") || line.startsWith("+++ ")) continue;
    else if (line.startsWith("@@")) {
      const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      oldLine = Number(hunk?.[1] ?? 0);
      newLine = Number(hunk?.[2] ?? 0);
    } else if (line.startsWith("+")) {
      current.added.push({ line: newLine++, text: line.slice(1) });
    } else if (line.startsWith("-")) {
      current.removed.push({ line: oldLine++, text: line.slice(1) });
    } else if (line.startsWith(" ")) {
      oldLine++;
      newLine++;
    }
  }
  return files;
}
