/** One file's side of a unified diff: the lines it adds (new numbering) and removes (old numbering). */
export interface FileDiff {
  path: string;
  /** Path before the change, for deletions; same as path otherwise. */
  oldPath: string;
  added: { line: number; text: string }[];
  removed: { line: number; text: string }[];
  isNew: boolean;
  isDeleted: boolean;
  /** The new side is a symbolic link (mode 120000): its one added line is the link's target. */
  isSymlink?: boolean;
}

/**
 * Pure: parses `git diff --no-renames` output (any context size). Paths come
 * from the `---`/`+++` lines, unquoted where git quotes them (non-ASCII,
 * tabs, quotes), so no changed file is dropped; the `diff --git` line, which
 * is ambiguous for names with spaces, is only the fallback (binary files).
 */
export function parseUnifiedDiff(text: string): FileDiff[] {
  const files: FileDiff[] = [];
  let current: FileDiff | undefined;
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) {
      const [oldPath, path] = headerPaths(line.slice("diff --git ".length));
      current = { path, oldPath, added: [], removed: [], isNew: false, isDeleted: false };
      files.push(current);
      inHunk = false;
      continue;
    }
    if (!current) continue;
    if (!inHunk) {
      if (/^new (file )?mode 120000$/.test(line)) current.isSymlink = true;
      if (line.startsWith("new file mode")) current.isNew = true;
      else if (line.startsWith("deleted file mode")) current.isDeleted = true;
      else if (line.startsWith("--- ")) current.oldPath = sidePath(line.slice(4), "a/") ?? current.oldPath;
      else if (line.startsWith("+++ ")) {
        current.path = sidePath(line.slice(4), "b/") ?? current.oldPath;
        if (current.isNew) current.oldPath = current.path;
      }
      if (!line.startsWith("@@")) continue;
      inHunk = true;
    }
    if (line.startsWith("@@")) {
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

/** `a/x b/y` or `"a/x" "b/y"` from a `diff --git` line; for unquoted names with spaces, the split in the middle. */
function headerPaths(rest: string): [string, string] {
  if (rest.startsWith('"')) {
    const quoted = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((match) => (match[1] !== undefined ? unquote(match[1]) : (match[2] ?? "")));
    return [(quoted[0] ?? "").replace(/^a\//, ""), (quoted[1] ?? "").replace(/^b\//, "")];
  }
  const half = (rest.length - 1) / 2;
  const [left, right] = Number.isInteger(half) && rest.slice(2, half) === rest.slice(half + 3) ? [rest.slice(0, half), rest.slice(half + 1)] : (rest.split(" b/", 2) as [string, string]);
  return [left.replace(/^a\//, ""), (right ?? "").replace(/^b\//, "")];
}

/** The path of a `---`/`+++` line, or undefined for /dev/null. */
function sidePath(value: string, prefix: string): string | undefined {
  const raw = value.startsWith('"') && value.endsWith('"') ? unquote(value.slice(1, -1)) : value.replace(/\t$/, "");
  if (raw === "/dev/null") return undefined;
  return raw.startsWith(prefix) ? raw.slice(prefix.length) : raw;
}

/** Undoes git's C-style quoting: \", \\, \t, \n and octal bytes (UTF-8). */
function unquote(text: string): string {
  const bytes: number[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    if (char !== "\\") {
      bytes.push(...Buffer.from(char, "utf8"));
      continue;
    }
    const next = text[at + 1] ?? "";
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(text.slice(at + 1, at + 4), 8));
      at += 3;
      continue;
    }
    bytes.push(({ n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11 } as Record<string, number>)[next] ?? next.charCodeAt(0));
    at += 1;
  }
  return Buffer.from(bytes).toString("utf8");
}
