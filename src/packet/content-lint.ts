import { posix } from "node:path";
import picomatch from "picomatch";
import type { Packet } from "./types.js";

/**
 * What a packet says about the repository, checked against the tip without a
 * model: scope patterns that can match nothing (a typo), files the brief
 * names that neither exist nor are in scope to create, and planted Python
 * tests importing a module of the project that neither exists nor may be
 * created. Each costs a full implementer and reviewer round when it reaches
 * a run; lint names it first. Findings are warnings: a new top-level
 * directory or a file a brief names only to say it must not exist is
 * legitimate, and only a person can tell.
 */
export interface ContentInput {
  packet: Packet;
  /** Every file and directory at the tip (`tipIndex`, made once for every packet). */
  tip: TipIndex;
  /** The planted Python files' text, by the path they are planted at (the packet's `planted` lists them all). */
  planted: ReadonlyMap<string, string>;
  /** The scope of the packets it requires (directly or not): files they may create before it runs. */
  dependencyScope: readonly string[];
}

/** Pure: the findings about one packet, each a sentence naming the field. */
export function contentFindings(input: ContentInput): string[] {
  const { tip } = input;
  // A packet without allowed_paths may create anything.
  const scope = input.packet.allowedPaths === undefined ? ["**"] : [...input.packet.allowedPaths, ...input.dependencyScope];
  const inScope = scope.length > 0 ? picomatch(scope, { dot: true }) : () => false;
  const planted = new Set(input.packet.planted);
  const exists = (path: string): boolean => tip.files.has(path) || tip.dirs.has(path) || planted.has(path);
  return [...scopeFindings(input, tip), ...briefFindings(input.packet.brief, exists, inScope), ...importFindings(input.planted, tip, inScope)];
}

export interface TipIndex {
  files: ReadonlySet<string>;
  dirs: ReadonlySet<string>;
}

/** Pure: the tip's files and every directory above them. */
export function tipIndex(paths: Iterable<string>): TipIndex {
  const files = new Set(paths);
  const dirs = new Set<string>();
  for (const file of files) {
    for (let dir = posix.dirname(file); dir !== "."; dir = posix.dirname(dir)) {
      if (dirs.has(dir)) break;
      dirs.add(dir);
    }
  }
  return { files, dirs };
}

/** An allowed_paths pattern that matches nothing at the tip and starts in a directory that does not exist there. */
function scopeFindings(input: ContentInput, tip: TipIndex): string[] {
  const findings: string[] = [];
  for (const pattern of input.packet.allowedPaths ?? []) {
    const first = pattern.split("/")[0] ?? "";
    if (first === "" || GLOB.test(first) || !pattern.includes("/")) continue; // `**/x`, `*.py` or a top-level file: nothing to check
    if (tip.files.has(first) || tip.dirs.has(first)) continue;
    if (input.dependencyScope.some((other) => other.split("/")[0] === first)) continue; // a packet it requires makes it
    const matcher = picomatch(pattern, { dot: true });
    if ([...tip.files].some((file) => matcher(file))) continue;
    findings.push(`allowed_paths: "${pattern}" matches no path at the tip, and ${first}/ does not exist there (a typo? a new top-level directory is fine)`);
  }
  return findings;
}

const GLOB = /[*?[\]{}!]/;
/** File names worth checking in a brief: a name with a source or data file's extension, or a directory (ending in a slash); not `application/json`. */
const FILE_LIKE = /^(?:[\w.@-]+\/)*[\w.@-]+\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|json|toml|ya?ml|md|rst|txt|cfg|ini|rs|go|java|kt|rb|c|h|cc|cpp|hpp|cs|sh|css|scss|html|sql|proto|lock)$|^(?:[\w.@-]+\/)+$/;

/** Files the brief names in backticks that are not at the tip and that the packet may not create. */
function briefFindings(brief: string, exists: (path: string) => boolean, inScope: (path: string) => boolean): string[] {
  const named = new Set([...brief.matchAll(/`([^`\s]+)`/g)].map((match) => (match[1] ?? "").replace(/^\.\//, "")));
  const findings: string[] = [];
  for (const name of named) {
    if (!FILE_LIKE.test(name) || name.startsWith("/") || name.includes("..") || /^[a-z]+:\/\//.test(name)) continue;
    const path = name.replace(/\/$/, "");
    if (exists(path) || inScope(path) || inScope(`${path}/x`)) continue;
    findings.push(`brief: names \`${name}\`, which is not at the tip and is not in the packet's scope to create`);
  }
  return findings;
}

/**
 * Modules of the project a planted Python test imports that are neither at
 * the tip nor creatable in scope. Only imports under a top-level package of
 * the project's own (a directory or module at the root or under `src/`) are
 * judged: anything else is the standard library or an installed dependency.
 */
function importFindings(planted: ReadonlyMap<string, string>, tip: TipIndex, inScope: (path: string) => boolean): string[] {
  const findings: string[] = [];
  for (const [file, text] of planted) {
    if (!file.endsWith(".py")) continue;
    for (const module of importedModules(text)) {
      const parts = module.split(".");
      const root = [".", "src"].find((base) => {
        const top = base === "." ? (parts[0] as string) : `src/${parts[0]}`;
        return tip.dirs.has(top) || tip.files.has(`${top}.py`);
      });
      if (!root) continue; // not the project's own
      const base = root === "." ? "" : "src/";
      const candidates = [`${base}${parts.join("/")}.py`, `${base}${parts.join("/")}/__init__.py`, `${base}${parts.join("/")}`];
      if (candidates.some((path) => tip.files.has(path) || tip.dirs.has(path) || planted.has(path) || inScope(path))) continue;
      findings.push(`${file}: imports ${module}, which is not at the tip and which the packet may not create`);
    }
  }
  return findings;
}

/** Pure: the absolute module names a Python file imports at any indentation (`import a.b`, `from a.b import c`). */
export function importedModules(text: string): string[] {
  const modules = new Set<string>();
  for (const line of text.split("\n")) {
    const from = /^\s*from\s+([A-Za-z_][\w.]*)\s+import\b/.exec(line);
    if (from?.[1]) {
      modules.add(from[1]);
      continue;
    }
    const plain = /^\s*import\s+([A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*(?:\s+as\s+\w+)?)*)\s*(?:#.*)?$/.exec(line);
    if (plain?.[1]) for (const part of plain[1].split(",")) modules.add((part.trim().split(/\s+/)[0] as string).trim());
  }
  return [...modules];
}

/**
 * Pure: the files a packet may change, named one by one (no pattern), when
 * every one of them is already at the tip; undefined otherwise. With planted
 * tests that already pass there, the work may have landed already (by hand,
 * or through another packet).
 */
export function allScopeAtTip(allowed: readonly string[] | undefined, exists: (path: string) => boolean): string[] | undefined {
  const named = (allowed ?? []).filter((pattern) => !GLOB.test(pattern));
  return named.length > 0 && named.length === (allowed ?? []).length && named.every(exists) ? named : undefined;
}
