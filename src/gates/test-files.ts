import { posix } from "node:path";
import type { TestResult } from "./junit.js";
import { matchesAny } from "./paths.js";

/**
 * What a test is, from facts about the tip rather than file-name guesses (issue 55 §2, DESIGN §6 "The
 * verdict tree"): the files the runner's own report named at the tip, the patterns the runner's own
 * configuration collects (pytest's `python_files`, `--doctest-modules`), and what the surface declares
 * (`tests = [...]`) for a runner whose report names no file. The conventional names stay as an early,
 * cheap signal.
 */
export interface TestFacts {
  /** Repository paths of the files the runner reported cases of at the tip. */
  collected: readonly string[];
  /** Repository-path globs of files the runner collects as tests (its configuration, the surface's declaration). */
  patterns: readonly string[];
  /** Source modules with doctests are test files too (pytest's `--doctest-modules`): their examples are the team's. */
  doctestModules: boolean;
  /** Directories (repository paths) the runner's configuration says the tests live in (pytest's `testpaths`), but for the surface's own root. */
  roots: readonly string[];
}

/** Files that hold tests by the conventions of pytest, unittest, jest, vitest, mocha, ava and node:test. */
export const CONVENTIONAL_TEST_FILES = [
  "**/test_*.py",
  "**/*_test.py",
  "**/tests/**",
  "**/test/**",
  "**/__tests__/**",
  "**/*.test.*",
  "**/*.spec.*",
  "**/conftest.py",
  // ava's own defaults beside the above: `test.js` (at the root, in src/ or source/) and `test-*.js`, in any JavaScript or TypeScript flavour.
  "**/test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}",
  "**/test-*.{js,cjs,mjs,jsx,ts,cts,mts,tsx}",
];

export const NO_TEST_FACTS: TestFacts = { collected: [], patterns: [], doctestModules: false, roots: [] };

/** Pure: whether `path` is a test file by the facts, or by the conventional names; a source module with doctests is not (isDoctestModule). */
export function isTestByFacts(facts: TestFacts, path: string): boolean {
  if (matchesAny(path, CONVENTIONAL_TEST_FILES) || matchesAny(path, facts.patterns)) return true;
  return facts.collected.includes(path) && !isDoctestModule(facts, path);
}

/** Pure: whether `path` is a source module the runner collects for its doctests alone: the code under test, whose examples judge it. */
export function isDoctestModule(facts: TestFacts, path: string): boolean {
  return facts.doctestModules && isCodeFile(path) && facts.collected.includes(path) && !matchesAny(path, CONVENTIONAL_TEST_FILES) && !matchesAny(path, facts.patterns);
}

/** The extensions of source modules a runner imports: a changed one the tests read is, by default, the code under test. */
const CODE = /\.(py|pyi|pyx|js|mjs|cjs|jsx|ts|mts|cts|tsx|so|node)$/;

/** Pure: whether a path is a source module (code) rather than data. */
export function isCodeFile(path: string): boolean {
  return CODE.test(path);
}

/**
 * Pure: the files of `tipFiles` (repository paths) that the runner's report names cases of: by a `file`
 * attribute, by a classname that is the file's dotted module path or starts with it (pytest's
 * `tests.test_calc`, `tests.test_calc.TestAdd`), or by a name that is the file's path (node:test, a file that
 * could not load).
 */
export function collectedFiles(results: readonly TestResult[], tipFiles: readonly string[], surfaceDir: string): string[] {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  const byForm = new Map<string, string>();
  for (const file of tipFiles) {
    if (!file.startsWith(prefix)) continue;
    const inside = file.slice(prefix.length);
    const stem = inside.replace(/\.[^./]+$/, "");
    for (const form of [file, inside, stem, stem.replaceAll("/", ".")]) if (!byForm.has(form)) byForm.set(form, file);
  }
  const found = new Set<string>();
  for (const result of results) {
    const at = result.id.indexOf("::");
    const [classname, name] = at < 0 ? ["", result.id] : [result.id.slice(0, at), result.id.slice(at + 2)];
    // A name is a path only where there is no classname (node:test's entry for a file, a file that could not load).
    const named = [result.file, classname || name].filter((form): form is string => Boolean(form));
    // A classname `a.b.c.TestX` names the module `a.b.c`, or `a.b` when c is a class: the longest that is a file.
    const parts = classname.split(".");
    for (let length = parts.length - 1; length > 0; length--) named.push(parts.slice(0, length).join("."));
    for (const form of named) {
      const file = byForm.get(form) ?? byForm.get(form.replace(/^\.\//, ""));
      if (file) {
        found.add(file);
        break;
      }
    }
  }
  return [...found].sort();
}

/**
 * Pure: what pytest's configuration at the tip makes a test file, from the texts of the surface's
 * `pytest.ini`, `pyproject.toml` (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and `setup.cfg`
 * (`[tool:pytest]`), as repository-path globs: `python_files` patterns (under `testpaths` when given), and
 * whether `--doctest-modules` is in `addopts`.
 */
export function pytestCollection(texts: ReadonlyMap<string, string>, surfaceDir: string): { patterns: string[]; doctestModules: boolean; roots: string[] } {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  const options = new Map<string, string>();
  for (const [file, text] of texts) {
    const section = posix.basename(file) === "pyproject.toml" ? /^tool\.pytest\.ini_options$/ : posix.basename(file) === "setup.cfg" ? /^tool:pytest$/ : /^pytest$/;
    for (const [key, value] of sectionOptions(text, section)) if (!options.has(key)) options.set(key, value);
  }
  const words = (key: string): string[] => (options.get(key) ?? "").split(/[\s,]+/).filter(Boolean);
  const roots = words("testpaths")
    .map((root) => posix.normalize(`${prefix}${root}`).replace(/\/+$/, ""))
    .filter((root) => root !== "." && root !== surfaceDir && !root.startsWith(".."));
  const patterns = words("python_files").flatMap((pattern) => (roots.length > 0 ? roots.map((root) => `${root}/**/${pattern}`) : [`${prefix}**/${pattern}`]));
  return { patterns, doctestModules: /(^|\s)--doctest-modules\b/.test(options.get("addopts") ?? ""), roots };
}

/**
 * Pure: the options of the first section whose header matches, as ini or TOML writes them: `key = value`,
 * a value continued on indented lines (ini), or a TOML array of strings (joined by spaces).
 */
function sectionOptions(text: string, header: RegExp): Map<string, string> {
  const options = new Map<string, string>();
  let inside = false;
  let key: string | undefined;
  for (const line of text.split("\n")) {
    const section = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (section) {
      inside = header.test((section[1] ?? "").trim().replaceAll('"', ""));
      key = undefined;
      continue;
    }
    if (!inside || /^\s*[#;]/.test(line)) continue;
    const pair = /^([A-Za-z_][\w-]*)\s*[=:]\s*(.*)$/.exec(line);
    if (pair) {
      key = pair[1] ?? "";
      options.set(key, unquoted(pair[2] ?? ""));
    } else if (key && line.trim()) {
      // an indented ini continuation, or the next line of a TOML array
      options.set(key, `${options.get(key) ?? ""} ${unquoted(line.trim())}`.trim());
    }
  }
  return options;
}

/** A TOML string or array of strings as space-separated words; an ini value as it is. */
function unquoted(value: string): string {
  const strings = [...value.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((match) => match[1] ?? match[2] ?? "");
  return strings.length > 0 ? strings.join(" ") : value.replace(/[[\]]/g, " ").trim();
}

/** The configuration files pytest reads at the surface's directory, as repository paths. */
export function pytestConfigFiles(surfaceDir: string): string[] {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  return ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"].map((file) => `${prefix}${file}`);
}

/** Pure: a surface's declared test globs (relative to its directory) as repository-path globs. */
export function declaredTestPatterns(surfaceDir: string, declared: readonly string[] | undefined): string[] {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  return (declared ?? []).map((glob) => `${prefix}${glob}`);
}
