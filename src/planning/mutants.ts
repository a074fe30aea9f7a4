import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { type FileDiff, parseUnifiedDiff } from "../gates/diff-parse.js";
import { isTestFile, plantedCases, plantedTestFiles } from "../gates/test-compare.js";
import { diffText } from "../git/diff.js";
import { createWorktree, removeWorktree, restoreWorktree } from "../git/worktree.js";
import { HOLDOUT_DIR, holdoutFiles } from "../guards/holdout.js";
import { hasBaseline, runTests, type TestRun } from "../loop/baseline.js";
import { checkInterrupted, type RunContext, surfaceOf, worktreesDir } from "../loop/context.js";
import { installSurface } from "../loop/prepare.js";
import type { Packet } from "../packet/types.js";
import { jsMutants, sampleEvenly } from "./mutate-js.js";

export interface MutantsMeasured {
  made: number;
  killed: number;
  /** Mutants the tests did not tell from the landed code, the first few. */
  survivors: { file: string; line: number; description: string }[];
  /** One mutant the tests killed, for the reviewer canary. */
  killedExample?: { file: string; line: number; description: string };
  /** Why nothing was measured (no planted tests, no changed source line, the tests fail on the landed tree). */
  reason?: string;
  /** Mutants chosen but not run: the night's share for the mutation check ran out. */
  unrun?: number;
  /** Mutants killed because their run went past a few times the landed code's (an endless loop): a timeout kills a mutant. */
  timedOut?: number;
  /** What the check cost before its first mutant (checkout, install, the landed run): the next packet's is guessed from it. */
  setupMs?: number;
}

/** Why a check was cut short, or not made: the run's share for it was spent. */
export const SHARE_SPENT = "the mutation check's share of the night ran out before it ([planning] mutants_share)";

/** A mutant's run may take this many times the landed code's run (and at least MIN_MUTANT_MS) before it is stopped, and counted killed. */
const MUTANT_TIMES = 4;
const MIN_MUTANT_MS = 5_000;

const JS = /\.[cm]?[jt]sx?$/;
const MAX_SURVIVORS = 10;

/**
 * After a packet lands: simple mutants of the source lines its squash
 * changed (not its tests), at most `budget`, each run against the packet's
 * planted and hidden tests in a scratch checkout of the landed commit, in
 * the sandbox like any gate. A mutant is killed when a planted or hidden
 * case that passes on the landed code fails on it (or the run breaks). The
 * share killed says whether the tests can tell this code from a broken one.
 */
export async function measureMutants(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: {
    packet: Packet;
    commit: string;
    runDir: string;
    budget: number;
    /** No mutant is started that would end past it (epoch ms), guessed by the longest run so far; with `first`, the first mutant always runs. */
    deadline?: number;
    first?: boolean;
  },
): Promise<MutantsMeasured> {
  const { packet } = input;
  const setupStarted = Date.now();
  const none = (reason: string): MutantsMeasured => ({ made: 0, killed: 0, survivors: [], reason });
  const surface = surfaceOf(ctx.config, packet);
  const hidden = holdoutFiles(ctx.root, packet.id);
  const tests = [...plantedTestFiles(packet.planted, packet.supportFiles), ...hidden];
  if (!surface || !hasBaseline(surface)) return none("its surface has no tests gate");
  if (tests.length === 0) return none("it has no planted or hidden tests to judge");
  if ((await mutableFiles(ctx.root, input.commit, packet)).length === 0) return none("its change has no JavaScript, TypeScript or Python source line to mutate");

  const worktree = join(worktreesDir(ctx.root), `_mutants-${process.pid}`);
  await removeWorktree(ctx.root, worktree);
  await createWorktree(ctx.root, { path: worktree, start: input.commit });
  try {
    mkdirSync(input.runDir, { recursive: true });
    for (const file of hidden) {
      mkdirSync(dirname(join(worktree, file)), { recursive: true });
      copyFileSync(join(ctx.root, HOLDOUT_DIR, packet.id, file), join(worktree, file));
    }
    const installError = await installSurface(ctx, worktree, surface, input.runDir);
    if (installError) return none(installError);
    const run = (name: string, within = surface): Promise<TestRun> => runTests(ctx, { worktree, surface: within, runDir: join(input.runDir, name), only: tests });
    const landedAt = Date.now();
    const landed = await run("landed");
    const landedMs = Date.now() - landedAt;
    // A mutant that makes the code loop for ever is stopped after a few times the landed run, and killed by it.
    const limitMs = Math.max(MIN_MUTANT_MS, MUTANT_TIMES * landedMs);
    const bounded = { ...surface, gates: surface.gates.map((gate) => ({ ...gate, timeoutMs: Math.min(gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs, limitMs) })) };
    if (!landed.ok) return none(`its tests do not run on the landed tree: ${landed.reason}`);
    const failing = [...landed.runs.values()].flatMap((gate) => gate.results.filter((result) => result.outcome === "failed"));
    if (failing.length > 0) return none(`its tests fail on the landed tree (${failing[0]?.id}…), so no mutant can be judged`);

    const chosen = sampleEvenly(await mutationSites(worktree, input.commit, packet), input.budget);
    const setupMs = Date.now() - setupStarted;
    const measured: MutantsMeasured = { made: chosen.length, killed: 0, survivors: [], setupMs };
    let unmade = 0;
    // A mutant's run is guessed to take as long as the longest so far (the landed run's, first): none is started that would end past the deadline.
    let longestMs = landedMs;
    if (chosen.length === 0) return { ...measured, reason: "no simple mutant could be made of its changed lines" };
    for (const [index, mutant] of chosen.entries()) {
      checkInterrupted(ctx.signal);
      if (!(index === 0 && input.first) && input.deadline !== undefined && Date.now() + longestMs >= input.deadline) {
        // None run: nothing measured, rather than a verdict on no mutant.
        if (index - unmade === 0) return { made: 0, killed: 0, survivors: [], reason: SHARE_SPENT, unrun: chosen.length, setupMs };
        measured.unrun = chosen.length - index;
        break;
      }
      const path = join(worktree, mutant.file);
      const original = readFileSync(path);
      const source = await sourceOf(mutant);
      if (source === undefined) {
        unmade++; // the mutator could not write it: not judged, not counted
        continue;
      }
      writeFileSync(path, source);
      const started = Date.now();
      try {
        const result = await run(`mutant-${index + 1}`, bounded);
        const where = { file: mutant.file, line: mutant.line, description: mutant.description };
        if (!result.ok && Date.now() - started >= limitMs) measured.timedOut = (measured.timedOut ?? 0) + 1;
        if (killedBy(result, landed, tests, surface.dir)) {
          measured.killed++;
          measured.killedExample ??= where;
        } else if (measured.survivors.length < MAX_SURVIVORS) {
          measured.survivors.push(where);
        }
      } finally {
        writeFileSync(path, original);
        await restoreWorktree(worktree); // what the run left (bytecode, caches outside the kept ones) is not the next mutant's
        longestMs = Math.max(longestMs, Date.now() - started);
        for (const file of hidden) {
          if (!existsSync(join(worktree, file))) copyFileSync(join(ctx.root, HOLDOUT_DIR, packet.id, file), join(worktree, file));
        }
      }
    }
    // What was not run was not made: `made` counts the mutants judged.
    return { ...measured, made: chosen.length - (measured.unrun ?? 0) - unmade };
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/** The source files the packet's squash (`commit`) changed that mutants are made of: JavaScript, TypeScript and Python, not tests. */
async function mutableFiles(cwd: string, commit: string, packet: Packet): Promise<FileDiff[]> {
  return parseUnifiedDiff(await diffText(cwd, `${commit}^`, commit, { context: 0 })).filter(
    (file) => !file.isDeleted && !file.isSymlink && !isTestFile(file.path) && !packet.planted.includes(file.path) && file.added.length > 0 && (JS.test(file.path) || file.path.endsWith(".py")),
  );
}

/**
 * The places mutants can be made on the lines the packet's squash added, in a checkout of `commit`, in a
 * stable order (the reviewer canary finds one again by its place). A JavaScript site carries its source;
 * a Python one's is written out by `sourceOf` only when it is run: unparsing a file of thousands of lines
 * for every site of a large change took longer than running the mutants.
 */
export async function mutationSites(worktree: string, commit: string, packet: Packet): Promise<Site[]> {
  const files = await mutableFiles(worktree, commit, packet);
  const python = files.filter((file) => file.path.endsWith(".py")).map((file) => ({ file: file.path, path: join(worktree, file.path), lines: [...new Set(file.added.map((added) => added.line))] }));
  const listed = await pythonSites(python);
  const all: Site[] = [];
  for (const file of files) {
    const at = python.findIndex((entry) => entry.file === file.path);
    const entry = python[at];
    if (entry) all.push(...(listed[at] ?? []).map((site, index) => ({ file: file.path, ...site, python: { path: entry.path, lines: entry.lines, at: index } })));
    else all.push(...jsMutants(file.path, readFileSync(join(worktree, file.path), "utf8"), new Set(file.added.map((added) => added.line))));
  }
  return all;
}

/** A site's mutant: the whole file with its one change; undefined when the mutator could not make it. */
export async function sourceOf(site: Site): Promise<string | undefined> {
  if (!site.python) return site.source;
  const { path, lines, at } = site.python;
  const made = await execa("python3", ["-I", "-S", PYTHON_MUTATOR, path, JSON.stringify(lines), "500", JSON.stringify([at])], { reject: false, timeout: 60_000 });
  return made.exitCode === 0 ? (JSON.parse(String(made.stdout)) as { source: string }[])[0]?.source : undefined;
}

/** A place a mutant can be made: a JavaScript one with its source, a Python one by its site number in the mutator's list. */
export interface Site {
  file: string;
  line: number;
  description: string;
  source?: string;
  python?: { path: string; lines: number[]; at: number };
}

/** A mutant is killed when the run breaks, or a planted or hidden case that passed on the landed tree fails (or its file no longer loads). */
function killedBy(run: TestRun, landed: TestRun & { ok: true }, files: readonly string[], surfaceDir: string): boolean {
  if (!run.ok) return true;
  for (const [gate, measured] of run.runs) {
    const found = plantedCases({ files, surfaceDir, baseline: landed.runs.get(gate)?.results ?? [], now: measured.results, only: measured.alone === true, failingAreTheirs: true });
    if (found.cases.length > 0 || found.counts.some((count) => count.loadError)) return true;
  }
  return false;
}

const PYTHON_MUTATOR = fileURLToPath(new URL("../../src/planning/mutate_python.py", import.meta.url));

/** The Python files' mutation sites (line and description), by the bundled AST mutator in one start (a file is parsed, never run); none for a file python3 cannot parse. */
async function pythonSites(files: readonly { path: string; lines: number[] }[]): Promise<{ line: number; description: string }[][]> {
  if (files.length === 0) return [];
  const made = await execa("python3", ["-I", "-S", PYTHON_MUTATOR, "--sites", "500"], { input: JSON.stringify(files), reject: false, timeout: 120_000 });
  return made.exitCode === 0 ? (JSON.parse(String(made.stdout)) as { line: number; description: string }[][]) : [];
}
