/** What `git status --porcelain=v2 -z --branch` says, parsed. */
export interface StatusV2 {
  /** The checked-out branch's short name, or "(detached)"; absent without --branch. */
  head?: string;
  /** The commit HEAD is at, or "(initial)" before the first commit. */
  oid?: string;
  /** Each entry: its path and two-letter code ("??" untracked, "!!" ignored); a rename also names where it came from. */
  entries: { path: string; code: string; from?: string }[];
}

/** Pure: parses `git status --porcelain=v2 -z [--branch]` output. */
export function parseStatusV2(out: string): StatusV2 {
  const records = out.split("\0");
  const status: StatusV2 = { entries: [] };
  for (let at = 0; at < records.length; at++) {
    const record = records[at] ?? "";
    const fields = record.split(" ");
    const code = fields[1] ?? "";
    if (record.startsWith("# branch.head ")) status.head = record.slice("# branch.head ".length);
    else if (record.startsWith("# branch.oid ")) status.oid = record.slice("# branch.oid ".length);
    else if (record.startsWith("1 ")) status.entries.push({ path: fields.slice(8).join(" "), code });
    else if (record.startsWith("2 ")) status.entries.push({ path: fields.slice(9).join(" "), code, from: records[++at] ?? "" });
    else if (record.startsWith("u ")) status.entries.push({ path: fields.slice(10).join(" "), code });
    else if (record.startsWith("? ")) status.entries.push({ path: record.slice(2), code: "??" });
    else if (record.startsWith("! ")) status.entries.push({ path: record.slice(2), code: "!!" });
  }
  return status;
}
