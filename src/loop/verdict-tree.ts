import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Surface } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import { collectedFiles, declaredTestPatterns, isCodeFile, isTestByFacts, pytestCollection, pytestConfigFiles, type TestFacts } from "../gates/test-files.js";
import { isTestSupport, type VerdictTree, verdictTreeOf } from "../gates/verdict-tree.js";
import type { Change } from "../git/diff.js";
import { listTreeFiles, readFileAt } from "../git/repo.js";
import { checkoutPathsFrom } from "../git/worktree.js";
import type { Packet } from "../packet/types.js";

/**
 * What a test is at `commit` (the planted commit: the tip and the planted files), from the runner: the
 * files the tip's baseline reported cases of, pytest's own configuration there, and the surface's
 * declared `tests` globs (gates/test-files.ts).
 */
export async function testFactsAt(worktree: string, commit: string, surface: Surface, baseline: ReadonlyMap<string, TestResult[]>): Promise<{ facts: TestFacts; tipFiles: string[] }> {
  const tipFiles = await listTreeFiles(worktree, commit, ".");
  const collected = collectedFiles([...baseline.values()].flat(), tipFiles, surface.dir);
  const texts = new Map<string, string>();
  for (const file of pytestConfigFiles(surface.dir)) {
    const text = tipFiles.includes(file) ? await readFileAt(worktree, commit, file) : undefined;
    if (text !== undefined) texts.set(file, text);
  }
  const pytest = pytestCollection(texts, surface.dir);
  const facts = { collected, patterns: [...pytest.patterns, ...declaredTestPatterns(surface.dir, surface.tests)], doctestModules: pytest.doctestModules, roots: pytest.roots };
  return { facts, tipFiles };
}

/** The verdict tree of the change `from..` (gates/verdict-tree.ts), with the facts it was made from. */
export async function verdictTreeFor(input: {
  worktree: string;
  from: string;
  surface: Surface;
  changes: readonly Change[];
  baseline: ReadonlyMap<string, TestResult[]>;
  tipReads: readonly string[] | undefined;
  packet: Pick<Packet, "changedTests" | "retiredTests" | "deletablePaths">;
  planted: readonly string[];
}): Promise<{ tree: VerdictTree; facts: TestFacts }> {
  const { facts, tipFiles } = await testFactsAt(input.worktree, input.from, input.surface, input.baseline);
  const helpers = await testSupportChanged(input.worktree, input.from, input.changes, input.tipReads, facts);
  const tree = verdictTreeOf({
    helpers,
    changes: input.changes,
    facts,
    tipReads: input.tipReads,
    tipFiles,
    planted: input.planted,
    changedTests: input.packet.changedTests,
    retiredTests: input.packet.retiredTests,
    deletablePaths: input.packet.deletablePaths,
  });
  return { tree, facts };
}

/** The source modules the change edited that the tip wrote for its tests (read by them, when traced). */
async function testSupportChanged(worktree: string, from: string, changes: readonly Change[], tipReads: readonly string[] | undefined, facts: TestFacts): Promise<string[]> {
  const read = tipReads ? new Set(tipReads) : undefined;
  const helpers: string[] = [];
  for (const change of changes) {
    if (change.kind === "added" || !isCodeFile(change.path) || isTestByFacts(facts, change.path) || (read && !read.has(change.path))) continue;
    const text = await readFileAt(worktree, from, change.path);
    if (text !== undefined && isTestSupport(change.path, text)) helpers.push(change.path);
  }
  return helpers;
}

/** Whether the verdict tree differs from the candidate's commit. */
export function differs(tree: VerdictTree | undefined): tree is VerdictTree {
  return tree !== undefined && (tree.putBack.length > 0 || tree.leftOut.length > 0);
}

/**
 * Makes the worktree (at the candidate's commit) the verdict tree: the put-back paths as `from` has them,
 * the left-out files gone. The next freshening (guards/runner-state.ts) or reduceToCommit undoes it.
 */
export async function applyVerdictTree(worktree: string, from: string, tree: VerdictTree): Promise<void> {
  if (tree.putBack.length > 0)
    await checkoutPathsFrom(
      worktree,
      from,
      tree.putBack.map((entry) => entry.path),
    );
  for (const path of tree.leftOut) rmSync(join(worktree, path), { force: true });
}
