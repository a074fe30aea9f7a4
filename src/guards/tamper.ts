import { posix } from "node:path";
import type { FileDiff } from "../gates/diff-parse.js";
import { matchesAny } from "../gates/paths.js";
import { CONVENTIONAL_TEST_FILES } from "../gates/test-files.js";
import { builtinReport, type Finding, type GateReport } from "../gates/types.js";
import { BINARY_EXTENSIONS } from "../git/binary.js";
import { type AssertFacts, weakenedAsserts } from "./assert-facts.js";
import { STDLIB_MODULES, TEST_TOOL_MODULES } from "./python-modules.js";
import { isPackageTestLine, loadsPluginByName, namesExplicitly, shadowedProjectModule, steeringPart } from "./runner-steering.js";

/** Whether `path` holds tests by the runners' conventions (the tamper gate's early reading; the runner's own facts are gates/test-files.ts). */
export function isTestPath(path: string): boolean {
  return matchesAny(path, CONVENTIONAL_TEST_FILES);
}

const SKIP_MARKERS: [RegExp, string][] = [
  [/@pytest\.mark\.(skip|skipif|xfail)\b/, "adds a pytest skip/xfail marker"],
  [/\bpytest\.(skip|xfail|importorskip)\s*\(/, "adds a pytest skip/xfail call"],
  [/@unittest\.(skip|skipIf|skipUnless|expectedFailure)\b/, "adds a unittest skip marker"],
  [/\.skipTest\s*\(/, "adds a skipTest call"],
  [/\b(it|test|describe|suite|context)\.(skip|todo|skipIf|fails)\b/, "adds a skipped or todo test"],
  [/\bx(it|test|describe)\s*\(/, "adds a skipped test (x-prefixed)"],
  [/\b(skip|todo)\s*:\s*(true|['"`])/, "adds a skip/todo option to a test"],
  [/\bt\.(skip|todo)\s*\(/, "adds a node:test skip/todo"],
];

const TAUTOLOGIES: RegExp[] = [
  /^\s*assert\s+(True|1|not\s+False)\s*(#.*)?$/,
  /^\s*assert\s+(\w+|\d+)\s*==\s*\1\s*(#.*)?$/,
  /\bexpect\(\s*(true|1|!0)\s*\)\.(toBe|toEqual|toBeTruthy)\(\s*(true|1)?\s*\)/,
  /\bassert(\.ok)?\(\s*(true|1)\s*\)/,
  /\bassert\.(equal|strictEqual|deepEqual|deepStrictEqual)\(\s*([\w"'`.]+)\s*,\s*\2\s*\)/,
  /\bself\.assertTrue\(\s*True\s*\)/,
];

const FAKE_SETUP: [RegExp, string][] = [
  [/autouse\s*=\s*True/, "adds an autouse fixture"],
  [/\bdef\s+pytest_(configure|collection_modifyitems|runtest_\w+|sessionstart)\b/, "adds a pytest hook that can change how tests run"],
  [/\b(globalSetup|setupFiles|setupFilesAfterEnv)\b/, "adds global test setup"],
];

/** Test definitions, matched over a run of lines joined (a formatter may wrap a call over several lines). */
const TEST_DEFINITION = [/^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)\s*\(/gm, /\b(?:it|test)\s*\(\s*(["'`])((?:(?!\1)[^\\]|\\.)+)\1/g];

const ASSERTION = /\bassert\b|\bexpect\s*\(|\bassert\w*\s*\(|\.should\b/g;

export interface TamperInput {
  files: readonly FileDiff[];
  /** Scope the packet grants: runner config inside allowed_paths may be edited. */
  allowed: readonly string[] | undefined;
  /** The surface's directory ("." for the root): where a new module could shadow the standard library or a test tool. */
  surfaceDir?: string;
  /** Paths the packet lets the agent delete: a deleted one takes its tests with it. */
  deletable?: readonly string[];
  /** Tests the packet retires (`path::name`, or a whole file's `path`): removing them is the author's wish. */
  retired?: readonly string[];
  /** The files of the tree the change started from: a new module named like one of them elsewhere shadows it. */
  tipFiles?: readonly string[];
  /** For Python test files the change edits: their tests' parsed assertions before and after. */
  assertFacts?: ReadonlyMap<string, { before: AssertFacts; after: AssertFacts }>;
  /** For pyproject.toml / setup.cfg: which lines (new side) lie in a pytest section. */
  pytestSectionLines?: ReadonlyMap<string, { added: Set<number>; removed: Set<number> }>;
  /** What a test is by the runner at the tip (gates/test-files.ts); the conventional names without it. */
  isTest?: (path: string) => boolean;
  /** Findings made outside the diff's lines (a doctest's expected output rewritten: guards/python-doctests.ts). */
  more?: readonly Finding[];
}

/**
 * Diffs that weaken tests fail, naming file and line: skip markers, deleted
 * test functions, fewer assertions, tautologies, fixtures or setup that could
 * fake behaviour, and edits to test-runner configuration outside scope.
 */
export function checkTamper(input: TamperInput): GateReport {
  const findings: Finding[] = [];
  // A test name removed in one file and added in another was moved (a file renamed, a test regrouped):
  // its assertions went with it, and are counted where it went.
  const addedBodies = new Map<string, { file: string; asserts: number }>();
  for (const file of input.files) for (const [name, body] of bodiesIn(file.added)) addedBodies.set(name, { file: file.path, asserts: body.asserts });
  const newPaths = input.files.filter((file) => file.isNew).map((file) => file.path);
  for (const file of input.files) {
    const shadowed = file.isNew ? shadowedModule(file.path, input.surfaceDir ?? ".") : undefined;
    if (shadowed) findings.push({ file: file.path, message: `shadows ${shadowed}: a module at the surface's root is imported instead of it by every test run` });
    if (/(^|\/)\.gitattributes$/.test(file.path)) {
      // An attribute that changes bytes between the checkout the gates test and what is committed or archived.
      for (const added of file.added) {
        const problem = attributeProblem(added.text);
        if (problem) findings.push({ file: file.path, line: added.line, message: problem });
      }
    }
    const isTest = (input.isTest ?? isTestPath)(file.path) || (input.isTest ?? isTestPath)(file.oldPath);
    // What steers the runner may change only where allowed_paths names it: a glob such as ** does not.
    const named = namesExplicitly(input.allowed, file.path);
    const firstLine = file.added[0]?.line ?? file.removed[0]?.line;
    for (const path of new Set([file.path, file.oldPath])) {
      const steering = steeringPart(path);
      if (steering && !namesExplicitly(input.allowed, path, steering.part)) {
        findings.push({ file: path, ...(firstLine ? { line: firstLine } : {}), message: `${steering.what} not named in the packet's allowed_paths` });
      }
    }
    const section = input.pytestSectionLines?.get(file.path);
    if (section && !named && (section.added.size > 0 || section.removed.size > 0)) {
      const line = [...section.added][0] ?? [...section.removed][0];
      findings.push({ file: file.path, ...(line ? { line } : {}), message: "edits the pytest configuration section, not named in the packet's allowed_paths" });
    }
    if (/(^|\/)package\.json$/.test(file.path) && !named) {
      const changed = [...file.added, ...file.removed].find((line) => isPackageTestLine(line.text));
      if (changed) findings.push({ file: file.path, line: changed.line, message: "edits the test script or a test runner's configuration, not named in the packet's allowed_paths" });
    }
    if (file.isSymlink && !named) {
      const target = file.added[0]?.text ?? "";
      if (linksToTests(file.path, target, [...(input.tipFiles ?? []), ...newPaths])) {
        findings.push({
          file: file.path,
          message: `makes a symbolic link where tests are read (to ${target}): the runner reads its target, which the tamper gate does not compare; allowed only where allowed_paths names it`,
        });
      }
    }
    const shadows = file.isNew && input.tipFiles && !named ? shadowedProjectModule(file.path, input.tipFiles, newPaths) : undefined;
    if (shadows) findings.push({ file: file.path, message: `shadows ${shadows}: a runner that puts this directory first on its path imports it instead` });
    if (!isTest) continue;
    // A new test module can switch off or fake nothing but itself: skipping it when an optional
    // dependency is missing, or a fixture local to it, is honest. In conftest.py it reaches every test.
    const ownModule = file.isNew && !/(^|\/)conftest\.py$/.test(file.path);
    findings.push(...addedLineFindings(file, ownModule, named));
    if (file.isNew) continue;
    // A file the packet lets the agent delete goes with its tests.
    if (file.isDeleted && matchesAny(file.oldPath, input.deletable ?? [])) continue;
    const removedBodies = bodiesIn(file.removed);
    let carried = 0; // assertions of the removed tests that were retired or moved to another file
    for (const [name, body] of removedBodies) {
      const added = addedBodies.get(name);
      if (added && added.file !== file.path) {
        carried += body.asserts;
        if (added.asserts < body.asserts) findings.push({ file: added.file, message: `moves the test "${name}" with fewer assertions (${body.asserts} before, ${added.asserts} now)` });
      } else if (isRetired(input.retired ?? [], file.oldPath, name)) {
        carried += body.asserts;
      } else if (!added) {
        findings.push({ file: file.path, line: body.line, message: `deletes the test "${name}"` });
      }
    }
    // Parsed, the file's tests say exactly what each one asserts, and when: that count replaces the line count.
    const parsed = input.assertFacts?.get(file.path);
    if (parsed?.before && parsed.after) {
      for (const weakened of weakenedAsserts(parsed.before, parsed.after)) findings.push({ file: file.path, ...weakened });
      continue;
    }
    const removedAsserts = countAssertions(file.removed.map((line) => line.text)) - carried;
    // A parametrized test asserts once per case: folding three asserts into one over three cases keeps them all.
    const addedAsserts = countAssertions(file.added.map((line) => line.text)) * Math.max(1, parametrizedCases(file.added.map((line) => line.text)));
    if (removedAsserts > addedAsserts) {
      const line = file.removed[0]?.line;
      findings.push({ file: file.path, ...(line ? { line } : {}), message: `lowers the number of assertions (${removedAsserts} removed, ${addedAsserts} added)` });
    }
  }
  findings.push(...(input.more ?? []));
  return builtinReport("tamper", findings, "no test was weakened");
}

/** Pure: what the lines a change added to a test file switch off, fake or make unable to fail. */
function addedLineFindings(file: TamperInput["files"][number], ownModule: boolean, named: boolean): Finding[] {
  const findings: Finding[] = [];
  for (const added of file.added) {
    for (const [pattern, message] of SKIP_MARKERS) {
      if (ownModule && /\bpytest\.importorskip\s*\(/.test(added.text) && !/\bpytest\.(skip|xfail)\s*\(/.test(added.text)) continue;
      if (pattern.test(added.text)) findings.push({ file: file.path, line: added.line, message });
    }
    if (TAUTOLOGIES.some((pattern) => pattern.test(added.text))) {
      findings.push({ file: file.path, line: added.line, message: "adds an assertion that cannot fail" });
    }
    for (const [pattern, message] of FAKE_SETUP) {
      if (ownModule && message === "adds an autouse fixture") continue;
      if (pattern.test(added.text)) findings.push({ file: file.path, line: added.line, message });
    }
    // A plugin named here loads for the whole session, from anywhere on the path (a module under src/ too).
    if (loadsPluginByName(added.text) && !named) {
      findings.push({
        file: file.path,
        line: added.line,
        message: "loads a pytest plugin by name (pytest_plugins), which can change how every test runs; allowed only where allowed_paths names this file",
      });
    }
  }
  return findings;
}

/**
 * Whether a symbolic link at `path` to `target` stands where tests are read: it is a test file by name, its
 * target is, or either holds test files (a test directory replaced by a link, a link to a directory of tests).
 */
function linksToTests(path: string, target: string, tree: readonly string[]): boolean {
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (isTestPath(path) || isTestPath(resolved)) return true;
  return tree.some((file) => (file.startsWith(`${path}/`) || file.startsWith(`${resolved}/`)) && isTestPath(file));
}

/** The standard-library module or test tool a new top-level Python module would replace, if any. */
function shadowedModule(path: string, surfaceDir: string): string | undefined {
  const prefix = surfaceDir === "." ? "" : `${surfaceDir}/`;
  if (!path.startsWith(prefix)) return undefined;
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(\.py|\/__init__\.py)$/.exec(path.slice(prefix.length));
  const name = match?.[1];
  if (name === undefined) return undefined;
  if (TEST_TOOL_MODULES.includes(name)) return `the test tool "${name}"`;
  if (STDLIB_MODULES.has(name)) return `the standard library's "${name}"`;
  return undefined;
}

/** The tests defined in a run of diff lines, each with the line its definition starts on. */
function namesIn(lines: readonly { line: number; text: string }[]): { name: string; line: number }[] {
  const text = lines.map((line) => line.text).join("\n");
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.text.length + 1;
  }
  const found: { name: string; line: number }[] = [];
  for (const pattern of TEST_DEFINITION) {
    for (const match of text.matchAll(pattern)) {
      const name = match[2] ?? match[1];
      if (!name) continue;
      const index = starts.findLastIndex((start) => start <= (match.index ?? 0));
      found.push({ name, line: lines[index]?.line ?? 0 });
    }
  }
  return found;
}

/** Whether `retired` (packet specs: `path::name`, `path::Class::name`, or `path`) names test `name` of `path`. */
function isRetired(retired: readonly string[], path: string, name: string): boolean {
  return retired.some((spec) => {
    const [file, ...inside] = spec.split("::");
    return file === path && (inside.length === 0 || inside.at(-1) === name);
  });
}

/**
 * The tests defined in a run of diff lines, each with its definition's line and the assertions of its
 * body: from its definition to the next definition or a gap in the line numbers (the end of that block).
 */
function bodiesIn(lines: readonly { line: number; text: string }[]): Map<string, { line: number; asserts: number }> {
  const starts = new Map(namesIn(lines).map((found) => [found.line, found.name]));
  const bodies = new Map<string, { line: number; asserts: number }>();
  let current: { line: number; asserts: number } | undefined;
  let previous = -1;
  for (const line of lines) {
    const name = starts.get(line.line);
    if (name !== undefined) {
      current = { line: line.line, asserts: 0 };
      bodies.set(name, current);
    } else if (line.line !== previous + 1) {
      current = undefined;
    }
    previous = line.line;
    if (current) current.asserts += line.text.match(ASSERTION)?.length ?? 0;
  }
  return bodies;
}

/**
 * Attributes that make the bytes the gates test differ from what lands or is archived: a clean/smudge
 * filter, `ident` ($Id$ expanded in the checkout), `export-subst` (rewritten in every archive),
 * `working-tree-encoding` (re-encoded between checkout and commit), and a line-ending conversion on
 * anything but a binary file type. Everything else hides nothing from the factory: it reads diffs with
 * `--text`, `--no-ext-diff` and `--no-textconv`, so `-diff`, `binary` and `diff=python` change no diff it
 * reads, and a merge driver (`merge=union`) only combines trees the gates then judge.
 */
const CONTENT_CHANGING: [RegExp, string][] = [
  [/^filter=/, "declares a clean/smudge filter: the bytes the gates test in the checkout would not be the ones committed"],
  [/^ident$/, "sets ident: $Id$ is expanded in the checkout, so the bytes the gates test would not be the ones committed"],
  [/^export-subst$/, "sets export-subst: every archive of the tree would hold other bytes than the ones tested"],
  [/^working-tree-encoding=/, "sets working-tree-encoding: the file is re-encoded between the checkout the gates test and the commit"],
  [/^(eol=|crlf=input$)/, "converts line endings: the bytes the gates test in the checkout would not be the ones committed"],
];

/** What a `.gitattributes` line does that changes the bytes between the tested tree and what lands or is archived, if anything. */
function attributeProblem(text: string): string | undefined {
  const [pattern, ...attributes] = text.trim().split(/\s+/);
  if (!pattern || pattern.startsWith("#")) return undefined;
  const extension = /\*\.([A-Za-z0-9]+)$/.exec(pattern)?.[1]?.toLowerCase() ?? /\.([A-Za-z0-9]+)$/.exec(pattern)?.[1]?.toLowerCase();
  const binaryType = !pattern.startsWith("[attr]") && extension !== undefined && BINARY_EXTENSIONS.has(extension);
  for (const attribute of attributes) {
    const found = CONTENT_CHANGING.find(([rule]) => rule.test(attribute));
    if (!found || (binaryType && /^(eol=|crlf=)/.test(attribute))) continue;
    return pattern.startsWith("[attr]") ? `defines an attribute macro that ${found[1]}` : found[1];
  }
  return undefined;
}

/**
 * How many cases the added parametrize/each tables hold (pytest's
 * `@pytest.mark.parametrize`, jest/vitest `.each`): one per element of a
 * one-line list, or one per tuple/array line of a multi-line one.
 */
function parametrizedCases(lines: readonly string[]): number {
  let cases = 0;
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at] ?? "";
    if (!/\bparametrize\s*\(|\.each\s*\(/.test(line)) continue;
    const list = /\[(.*)\]\s*\)?\s*(\(|$)/.exec(line.slice(line.search(/\bparametrize\s*\(|\.each\s*\(/)));
    if (list?.[1]?.trim()) {
      cases += splitTopLevel(list[1]).length;
      continue;
    }
    for (let next = at + 1; next < lines.length && !/^\s*[\])]/.test(lines[next] ?? ""); next++) {
      if (/^\s*[([{'"\d-]/.test(lines[next] ?? "")) cases++;
    }
  }
  return cases;
}

/** Elements of a list's inside, split on commas that are not nested in brackets or quotes. */
function splitTopLevel(inside: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (const char of inside) {
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"' || char === "`") {
      quote = char;
    } else if ("([{".includes(char)) {
      depth++;
    } else if (")]}".includes(char)) {
      depth--;
    } else if (char === "," && depth === 0) {
      parts.push(current);
      current = "";
      continue;
    }
    current += char;
  }
  if (current.trim()) parts.push(current);
  return parts.filter((part) => part.trim() !== "");
}

function countAssertions(lines: readonly string[]): number {
  return lines.reduce((count, line) => count + (line.match(ASSERTION)?.length ?? 0), 0);
}

/** Which changed lines of a TOML/INI file fall inside a pytest section ([tool.pytest…], [pytest], [tool:pytest]). */
export function pytestSectionLines(text: string | undefined, lines: readonly number[]): Set<number> {
  const inside = new Set<number>();
  if (text === undefined) return inside;
  const ranges: boolean[] = [];
  let current = false;
  text.split("\n").forEach((line, index) => {
    const header = /^\s*\[([^\]]+)\]/.exec(line);
    if (header) current = /^(tool\.pytest|pytest|tool:pytest)/.test((header[1] ?? "").trim());
    ranges[index + 1] = current;
  });
  for (const line of lines) if (ranges[line]) inside.add(line);
  return inside;
}
