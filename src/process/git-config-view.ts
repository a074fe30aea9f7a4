/**
 * What a sandboxed call sees of the repository's git configuration (issue 55 §4): only what git needs to
 * read a worktree, with no credential. `actions/checkout` leaves an `http.<url>.extraheader` with a token
 * in `.git/config`; a remote URL may carry `user:token@`; a credential helper, an include of another file,
 * a URL rewrite may name one. The sandbox shows a copy made of the kept keys instead of the file.
 */

/** Per section (lower case), the keys kept (lower case); `*` keeps every key of it. */
const KEPT: Record<string, readonly string[]> = {
  core: [
    "repositoryformatversion",
    "filemode",
    "bare",
    "logallrefupdates",
    "ignorecase",
    "precomposeunicode",
    "symlinks",
    "autocrlf",
    "eol",
    "safecrlf",
    "quotepath",
    "sparsecheckout",
    "sparsecheckoutcone",
    "longpaths",
    "checkstat",
    "trustctime",
    "abbrev",
    "worktree",
  ],
  extensions: ["*"],
  remote: ["url", "pushurl", "fetch", "push", "tagopt", "mirror"],
  branch: ["remote", "merge", "rebase", "pushremote"],
  user: ["name", "email"],
  init: ["defaultbranch"],
};

/** Pure: the configuration text with only the kept keys, and every URL's user information removed. */
export function credentialFreeConfig(text: string): string {
  const out: string[] = [];
  let section: string | undefined;
  let header: string | undefined;
  let continuing = false;
  for (const line of text.split("\n")) {
    if (continuing) {
      continuing = line.endsWith("\\");
      continue; // a continued value goes with its key, kept or not; only kept keys of one line are written
    }
    const opened = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (opened) {
      const name = (opened[1] ?? "").toLowerCase();
      // `[section.sub]` is the old form of `[section "sub"]`.
      section = name.includes(".") ? name.slice(0, name.indexOf(".")) : name;
      header = line.slice(0, line.indexOf("]") + 1).trim();
      const rest = opened[3] ?? "";
      if (!rest.trim() || /^[#;]/.test(rest.trim())) continue;
      // A key on the header's own line: kept as its own line below
      const kept = keptLine(section, rest);
      if (kept) push(kept);
      continue;
    }
    if (line.trimEnd().endsWith("\\")) {
      continuing = true;
      continue;
    }
    const kept = section ? keptLine(section, line) : undefined;
    if (kept) push(kept);
  }
  return out.length > 0 ? `${out.join("\n")}\n` : "";

  function push(entry: string): void {
    if (header !== undefined) {
      out.push(header);
      header = undefined;
    }
    out.push(`\t${entry}`);
  }
}

/** A `key = value` line of `section` as it is kept (its URL without user information), or undefined. */
function keptLine(section: string, line: string): string | undefined {
  const entry = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$/.exec(line);
  if (!entry) return undefined;
  const key = (entry[1] ?? "").toLowerCase();
  const keys = KEPT[section];
  if (!keys || !(keys.includes("*") || keys.includes(key))) return undefined;
  const value = entry[2];
  if (value === undefined) return key;
  return `${key} = ${section === "remote" && (key === "url" || key === "pushurl") ? withoutUserInfo(value) : value}`;
}

/** Pure: a URL (`https://user:token@host/…`, quoted or not) without its user information; anything else as it is. */
export function withoutUserInfo(value: string): string {
  return value.replace(/^("?)([a-z][a-z0-9+.-]*:\/\/)[^/@"\s]*@/i, "$1$2");
}
