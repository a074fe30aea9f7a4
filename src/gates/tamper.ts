import type { FileDiff } from "./diff-parse.js";
import { matchesAny } from "./paths.js";
import { STDLIB_MODULES, TEST_TOOL_MODULES } from "./python-modules.js";
import { builtinReport, type Finding, type GateReport } from "./types.js";

/** Files that hold tests, by the conventions of pytest, unittest, jest, vitest, mocha and node:test. */
const TEST_FILES = ["**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**", "**/__tests__/**", "**/*.test.*", "**/*.spec.*", "**/conftest.py"];

/** Test-runner configuration: editing it can switch tests off wholesale. */
const RUNNER_CONFIG = [
  "**/conftest.py",
  "**/pytest.ini",
  "**/.pytest.ini",
  "**/tox.ini",
  "**/.mocharc*",
  "**/karma.conf*",
  "**/vitest.config.*",
  "**/vitest.workspace.*",
  "**/vite.config.*",
  "**/jest.config.*",
  "**/jest.setup.*",
];

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

const TEST_DEFINITION = [/^\s*(async\s+)?def\s+(test\w*)\s*\(/, /\b(it|test)\s*\(\s*(["'`])(.+?)\2/];

const ASSERTION = /\bassert\b|\bexpect\s*\(|\bassert\w*\s*\(|\.should\b/g;

export interface TamperInput {
  files: readonly FileDiff[];
  /** Scope the packet grants: runner config inside allowed_paths may be edited. */
  allowed: readonly string[] | undefined;
  /** The surface's directory ("." for the root): where a new module could shadow the standard library or a test tool. */
  surfaceDir?: string;
  /** For pyproject.toml / setup.cfg: which lines (new side) lie in a pytest section. */
  pytestSectionLines?: ReadonlyMap<string, { added: Set<number>; removed: Set<number> }>;
}

/**
 * Diffs that weaken tests fail, naming file and line: skip markers, deleted
 * test functions, fewer assertions, tautologies, fixtures or setup that could
 * fake behaviour, and edits to test-runner configuration outside scope.
 */
export function checkTamper(input: TamperInput): GateReport {
  const findings: Finding[] = [];
  for (const file of input.files) {
    const shadowed = file.isNew ? shadowedModule(file.path, input.surfaceDir ?? ".") : undefined;
    if (shadowed) findings.push({ file: file.path, message: `shadows ${shadowed}: a module at the surface's root is imported instead of it by every test run` });
    if (/(^|\/)\.gitattributes$/.test(file.path)) {
      // A filter, diff or merge driver runs a command inside git itself: the committed bytes could differ from the tested ones.
      for (const added of file.added) {
        if (/(^|\s)-?(filter|diff|merge)(=|\s|$)/.test(added.text)) findings.push({ file: file.path, line: added.line, message: "declares a git filter, diff or merge driver" });
      }
    }
    const isTest = matchesAny(file.path, TEST_FILES) || matchesAny(file.oldPath, TEST_FILES);
    const inScope = input.allowed !== undefined && matchesAny(file.path, input.allowed);
    if (matchesAny(file.path, RUNNER_CONFIG) && !inScope) {
      const line = file.added[0]?.line ?? file.removed[0]?.line;
      findings.push({ file: file.path, ...(line ? { line } : {}), message: "edits test-runner configuration outside the packet's allowed_paths" });
    }
    const section = input.pytestSectionLines?.get(file.path);
    if (section && !inScope && (section.added.size > 0 || section.removed.size > 0)) {
      const line = [...section.added][0] ?? [...section.removed][0];
      findings.push({ file: file.path, ...(line ? { line } : {}), message: "edits the pytest configuration section outside the packet's allowed_paths" });
    }
    if (!isTest) continue;
    // A new test module can switch off or fake nothing but itself: skipping it when an optional
    // dependency is missing, or a fixture local to it, is honest. In conftest.py it reaches every test.
    const ownModule = file.isNew && !/(^|\/)conftest\.py$/.test(file.path);
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
    }
    if (file.isNew) continue;
    const addedNames = new Set(file.added.flatMap((line) => testNames(line.text)));
    for (const removed of file.removed) {
      for (const name of testNames(removed.text)) {
        if (!addedNames.has(name)) findings.push({ file: file.path, line: removed.line, message: `deletes the test "${name}"` });
      }
    }
    const removedAsserts = countAssertions(file.removed.map((line) => line.text));
    // A parametrized test asserts once per case: folding three asserts into one over three cases keeps them all.
    const addedAsserts = countAssertions(file.added.map((line) => line.text)) * Math.max(1, parametrizedCases(file.added.map((line) => line.text)));
    if (removedAsserts > addedAsserts) {
      const line = file.removed[0]?.line;
      findings.push({ file: file.path, ...(line ? { line } : {}), message: `lowers the number of assertions (${removedAsserts} removed, ${addedAsserts} added)` });
    }
  }
  return builtinReport("tamper", findings, "no test was weakened");
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

function testNames(text: string): string[] {
  const names: string[] = [];
  for (const pattern of TEST_DEFINITION) {
    const match = pattern.exec(text);
    const name = match?.[3] ?? match?.[2];
    if (match && name) names.push(name);
  }
  return names;
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
