/** A key path into a TOML document: table keys and array indexes. */
export type KeyPath = readonly (string | number)[];

interface Located {
  path: (string | number)[];
  line: number;
}

/**
 * Finds the line that best matches a key path, so that problems found after
 * parsing (the TOML parser keeps no positions) can still name a line.
 * It scans headers (`[a.b]`, `[[a.b]]`) and `key = value` lines, and returns
 * the first line whose path is the longest prefix of the wanted one.
 */
export function locateKey(source: string, wanted: KeyPath): number | undefined {
  let best: Located | undefined;
  let bestLength = 0;
  for (const entry of scanKeys(source)) {
    const length = commonPrefix(entry.path, wanted);
    if (length > bestLength && length === Math.min(entry.path.length, wanted.length)) {
      best = entry;
      bestLength = length;
    }
  }
  return best?.line;
}

export function formatKeyPath(path: KeyPath): string {
  let text = "";
  for (const part of path) {
    text += typeof part === "number" ? `[${part}]` : text === "" ? part : `.${part}`;
  }
  return text;
}

function commonPrefix(a: KeyPath, b: KeyPath): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function* scanKeys(source: string): Generator<Located> {
  const arrayCounts = new Map<string, number>();
  let header: (string | number)[] = [];
  let inMultiline: string | undefined;
  const lines = source.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index] ?? "";
    if (inMultiline !== undefined) {
      if (countOf(raw, inMultiline) % 2 === 1) inMultiline = undefined;
      continue;
    }
    const line = raw.trim();
    const arrayHeader = /^\[\[\s*([^\]]+?)\s*\]\]/.exec(line);
    const tableHeader = arrayHeader ? null : /^\[\s*([^\]]+?)\s*\]/.exec(line);
    if (arrayHeader) {
      const keys = splitDotted(arrayHeader[1] ?? "");
      const name = keys.join(".");
      const count = arrayCounts.get(name) ?? 0;
      arrayCounts.set(name, count + 1);
      header = [...keys, count];
      yield { path: header, line: index + 1 };
      continue;
    }
    if (tableHeader) {
      header = splitDotted(tableHeader[1] ?? "");
      yield { path: header, line: index + 1 };
      continue;
    }
    const assignment = /^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=(.*)$/.exec(line);
    if (!assignment) continue;
    yield { path: [...header, ...splitDotted(assignment[1] ?? "")], line: index + 1 };
    const rest = assignment[2] ?? "";
    for (const quote of ["'''", '"""']) {
      if (countOf(rest, quote) % 2 === 1) inMultiline = quote;
    }
  }
}

function splitDotted(text: string): string[] {
  return text.split(".").map((part) => part.trim().replace(/^["']|["']$/g, ""));
}

function countOf(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
