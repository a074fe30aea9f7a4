import { posix } from "node:path";
import picomatch from "picomatch";

/**
 * An `export-ignore` a change adds (issue 55 §1): `git archive` of the target then leaves those files out,
 * so a release made from it differs from the tree the gates tested. Honest uses leave out what no test needs
 * (`.github`, docs); one that leaves out a file the tests read is for a person to rule on.
 */
export interface ExportIgnored {
  /** The .gitattributes file and line that says it. */
  file: string;
  line: number;
  /** Tracked files of the commit it leaves out that the tests read. */
  read: string[];
}

/**
 * Pure: the export-ignore lines the change adds (`added`, per .gitattributes file) that leave out a tracked
 * file of the commit (`tracked`) the tests read (`read`), with gitattributes' matching: a pattern without a
 * slash matches a name at any depth below its file's directory, one with a slash is anchored there.
 */
export function exportIgnoredReads(added: readonly { path: string; added: readonly { line: number; text: string }[] }[], tracked: readonly string[], read: (path: string) => boolean): ExportIgnored[] {
  const found: ExportIgnored[] = [];
  for (const file of added) {
    if (!/(^|\/)\.gitattributes$/.test(file.path)) continue;
    const base = posix.dirname(file.path) === "." ? "" : `${posix.dirname(file.path)}/`;
    for (const line of file.added) {
      const [pattern, ...attributes] = line.text.trim().split(/\s+/);
      if (!pattern || pattern.startsWith("#") || pattern.startsWith("[attr]") || !attributes.includes("export-ignore")) continue;
      const anchored = pattern.replace(/^\//, "").replace(/\/$/, "");
      const glob = pattern.includes("/") && !/^[^/]+\/$/.test(pattern) ? `${base}${anchored}` : `${base}**/${anchored}`;
      const matches = picomatch([glob, `${glob}/**`], { dot: true });
      const hits = tracked.filter((path) => path.startsWith(base) && matches(path) && read(path));
      if (hits.length > 0) found.push({ file: file.path, line: line.line, read: hits });
    }
  }
  return found;
}
