import { posix } from "node:path";
import type { Change } from "../git/diff.js";
import { matchesAny } from "./paths.js";
import { CONVENTIONAL_TEST_FILES, isCodeFile, isTestByFacts, type TestFacts } from "./test-files.js";

/**
 * The verdict tree (issue 55 §2, DESIGN §6): what the team's tests and the planted tests run on. Every input
 * of the verdict comes from the tip or from the factory, except the change the packet declares: the
 * candidate's commit, with
 *
 * - the tip's version of every file that judges the work which the change edited or removed and the packet
 *   did not declare (`changed_tests`): the team's test files (as the runner collects them), files in
 *   directories that hold only tests, and every file the tip's tests read that is not source code (a
 *   cases file, a fixture) — put back;
 * - the candidate's new test modules and the new package initialisers beside the team's tests left out, so
 *   nothing the agent added can steer the team's tests at import.
 *
 * The candidate's own test files (new ones, and its versions of the team's it edited) run on the candidate
 * as it lands, after: every case there must pass too.
 */
export interface VerdictTree {
  /** Paths the verdict takes as the tip has them, each with why. */
  putBack: { path: string; why: "test" | "read" | "test-dir" | "helper" }[];
  /** Files the candidate added that the team's tests must pass without. */
  leftOut: string[];
  /** The candidate's test modules that differ from the verdict tree's: run on the candidate as it lands. */
  ownTests: string[];
}

export interface VerdictTreeInput {
  changes: readonly Change[];
  facts: TestFacts;
  /** The tip's files its tests, checks and whole-tree gates read (traced); undefined when not traced. */
  tipReads: readonly string[] | undefined;
  /** Every file of the tip (planted files included). */
  tipFiles: readonly string[];
  planted: readonly string[];
  changedTests: readonly string[];
  retiredTests: readonly string[];
  deletablePaths: readonly string[];
  /** Source modules of the tip written for the tests (isTestSupport): they judge, they are not judged. */
  helpers?: readonly string[];
}

/** Manifests, lock files and tool configuration: read by every run, and the tamper gate's to judge, not test material. */
const MANIFESTS =
  /(^|\/)(package(-lock)?\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|bun\.lockb?|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|uv\.lock|poetry\.lock|Pipfile(\.lock)?|requirements[^/]*\.txt|tsconfig[^/]*\.json|jsconfig\.json|\.python-version|\.nvmrc|\.gitignore|\.gitattributes)$/;

/** File names the runners collect as tests by themselves (not directories): what a new file named so is. */
const TEST_NAMES = CONVENTIONAL_TEST_FILES.filter((glob) => !glob.endsWith("/**"));

/** Pure: the verdict tree of a change. */
export function verdictTreeOf(input: VerdictTreeInput): VerdictTree {
  // Where the runner's configuration says the tests live (pytest's testpaths): what else is there is their support.
  const inTestDir = (path: string): boolean => input.facts.roots.some((root) => path.startsWith(`${root}/`));
  const reads = new Set(input.tipReads ?? []);
  const retiredFiles = input.retiredTests.filter((test) => !test.includes("::"));
  const declared = (path: string): boolean => input.planted.includes(path) || matchesAny(path, input.changedTests) || matchesAny(path, retiredFiles);
  const namesTests = (path: string): boolean => matchesAny(path, TEST_NAMES) || input.facts.collected.includes(path) || matchesAny(path, input.facts.patterns);
  const tree: VerdictTree = { putBack: [], leftOut: [], ownTests: [] };
  for (const change of input.changes) {
    const { path } = change;
    if (input.planted.includes(path)) continue;
    if (change.kind === "added") {
      const initialiser = /(^|\/)(__init__\.py|conftest\.py)$/.test(path);
      if (isTestByFacts(input.facts, path) || inTestDir(path) || (initialiser && hasTestsBeside(path, input.tipFiles, input.facts))) tree.leftOut.push(path);
      if (!initialiser && isCodeFile(path) && namesTests(path)) tree.ownTests.push(path);
      continue;
    }
    if (declared(path) || (change.kind === "deleted" && matchesAny(path, input.deletablePaths))) continue;
    const why = judges(path);
    if (!why) continue;
    tree.putBack.push({ path, why });
    if (change.kind !== "deleted" && why === "test" && isCodeFile(path) && namesTests(path)) tree.ownTests.push(path);
  }
  return tree;

  function judges(path: string): VerdictTree["putBack"][number]["why"] | undefined {
    // A source module with doctests is the code under test and a test at once: its examples are compared instead (the tamper gate).
    if (isTestByFacts(input.facts, path)) return "test";
    if (inTestDir(path)) return "test-dir";
    if (input.helpers?.includes(path)) return "helper";
    if (reads.has(path) && !isCodeFile(path) && !MANIFESTS.test(path)) return "read";
    return undefined;
  }
}

/**
 * Pure: of the files a run on the verdict tree read (traced), those the change edited or removed that judge the
 * work as data (not source code, not a manifest), that the packet did not declare and the tree did not put
 * back yet: the verdict runs again with them as the tip has them.
 */
export function readsToPutBack(
  tree: VerdictTree,
  reads: readonly string[],
  input: Pick<VerdictTreeInput, "changes" | "planted" | "changedTests" | "retiredTests" | "deletablePaths">,
): VerdictTree["putBack"] {
  const read = new Set(reads);
  const retiredFiles = input.retiredTests.filter((test) => !test.includes("::"));
  const already = new Set(tree.putBack.map((entry) => entry.path));
  return input.changes
    .filter((change) => change.kind !== "added" && read.has(change.path) && !already.has(change.path))
    .filter((change) => !(change.kind === "deleted" && matchesAny(change.path, input.deletablePaths)))
    .map((change) => change.path)
    .filter((path) => !input.planted.includes(path) && !matchesAny(path, input.changedTests) && !matchesAny(path, retiredFiles))
    .filter((path) => !isCodeFile(path) && !MANIFESTS.test(path))
    .map((path) => ({ path, why: "read" as const }));
}

/**
 * Pure: whether a source module of the tip was written for the tests, by what it is made of: it imports a test
 * framework, or defines assertion helpers at its top that assert (`def assert_close` with an `assert`, `export
 * function assertSorted` that calls `assert` or `expect`). Such a module judges the code beside it; the tests'
 * verdict takes it as the tip has it. An `assert` inside code, node:assert, or a helper named so that asserts
 * nothing (zod's `assertEqual`, `assert_never`) is no sign: libraries check their arguments with them.
 */
export function isTestSupport(path: string, text: string): boolean {
  if (/\.pyi?$/.test(path)) {
    if (/^\s*(?:import|from)\s+(?:pytest|_pytest|hypothesis|numpy\.testing)\b/m.test(text) || /^\s*(?:import|from)\s+unittest(?!\.mock)\b/m.test(text)) return true;
    // A top-level `def assert_…` whose body asserts (not a typing helper such as `assert_never`, which raises).
    return bodiesOf(text, /^def\s+assert_\w*\s*\(/gm, /^\S/m).some((body) => /^\s+assert\s/m.test(body));
  }
  if (/\.[cm]?[jt]sx?$/.test(path)) {
    // A test framework, not node:assert: libraries check their arguments with it.
    if (/\b(?:from|require\s*\(|import\s*\()\s*["'](?:node:test|chai|vitest|@jest\/globals|expect|ava|tap|uvu)["']/.test(text)) return true;
    // An exported `assertX` whose body asserts (not zod's `assertEqual`, a type-level helper that returns its argument).
    return bodiesOf(text, /\bexport\s+(?:async\s+)?function\s+assert[A-Z]\w*\s*\(/g, /^(?:export\s|function\s|const\s|class\s)/m).some((body) =>
      /\bassert(?:\.\w+)?\s*\(|\bexpect\s*\(/.test(body.slice(body.indexOf("{"))),
    );
  }
  return false;
}

/** Pure: the text from each match of `start` up to the next line matching `end` (the next top-level statement). */
function bodiesOf(text: string, start: RegExp, end: RegExp): string[] {
  return [...text.matchAll(start)].map((match) => {
    const from = (match.index ?? 0) + match[0].length;
    const rest = text.slice(from);
    const next = rest.search(new RegExp(`\\n(?=${end.source.replace(/^\^/, "")})`));
    return next < 0 ? rest : rest.slice(0, next);
  });
}

/** Whether a new package initialiser sits beside the team's test files (it runs at their import). */
function hasTestsBeside(path: string, tipFiles: readonly string[], facts: TestFacts): boolean {
  const dir = posix.dirname(path);
  return tipFiles.some((file) => posix.dirname(file) === dir && isTestByFacts(facts, file));
}

/** Pure: what a failing verdict run says about the tree it ran on (empty when it was the candidate's own). */
export function describeVerdictTree(tree: Pick<VerdictTree, "putBack" | "leftOut">): string {
  const some = (paths: readonly string[]): string => `${paths.slice(0, 3).join(", ")}${paths.length > 3 ? `, and ${paths.length - 3} more` : ""}`;
  const parts = [
    tree.putBack.length ? `with the tip's versions of the files that judge the work which the change edited (${some(tree.putBack.map((entry) => entry.path))})` : "",
    tree.leftOut.length ? `without the change's new test modules (${some(tree.leftOut)})` : "",
  ].filter(Boolean);
  return parts.join(" and ");
}
