import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { diffText } from "../git/diff.js";
import { createWorktree, removeWorktree, restoreWorktree } from "../git/worktree.js";
import { type FileDiff, parseUnifiedDiff } from "../gates/diff-parse.js";
import { isTestFile, plantedCases, plantedTestFiles } from "../gates/test-compare.js";
import { HOLDOUT_DIR, holdoutFiles } from "../guards/holdout.js";
import { hasBaseline, runTests, type TestRun } from "../loop/baseline.js";
import { checkInterrupted, surfaceOf, worktreesDir, type RunContext } from "../loop/context.js";
import { installSurface } from "../loop/prepare.js";
import type { Packet } from "../packet/types.js";
import { jsMutants, type Mutant, sampleEvenly } from "./mutate-js.js";

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
}

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
  input: { packet: Packet; commit: string; runDir: string; budget: number /** Past it (epoch ms), no further mutant is started; the first always runs. */; deadline?: number },
): Promise<MutantsMeasured> {
  const { packet } = input;
  const none = (reason: string): MutantsMeasured => ({ made: 0, killed: 0, survivors: [], reason });
  const surface = surfaceOf(ctx.config, packet);
  const hidden = holdoutFiles(ctx.root, packet.id);
  const tests = [...plantedTestFiles(packet.planted, packet.supportFiles), ...hidden];
  if (!surface || !hasBaseline(surface)) return none("its surface has no tests gate");
  if (tests.length === 0) return none("it has no planted or hidden tests to judge");
  if ((await mutableFiles(ctx.root, input.commit, packet)).length === 0) return none("its change has no JavaScript, TypeScript or Python source line to mutate");

  const worktree = join(worktreesDir(ctx.root), `.mutants-${process.pid}`);
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
    // A mutant that makes the code loop for ever is stopped after a few times the landed run, and killed by it.
    const limitMs = Math.max(MIN_MUTANT_MS, MUTANT_TIMES * (Date.now() - landedAt));
    const bounded = { ...surface, gates: surface.gates.map((gate) => ({ ...gate, timeoutMs: Math.min(gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs, limitMs) })) };
    if (!landed.ok) return none(`its tests do not run on the landed tree: ${landed.reason}`);
    const failing = [...landed.runs.values()].flatMap((gate) => gate.results.filter((result) => result.outcome === "failed"));
    if (failing.length > 0) return none(`its tests fail on the landed tree (${failing[0]?.id}…), so no mutant can be judged`);

    const chosen = sampleEvenly(await mutantsOf(worktree, input.commit, packet), input.budget);
    const measured: MutantsMeasured = { made: chosen.length, killed: 0, survivors: [] };
    if (chosen.length === 0) return { ...measured, reason: "no simple mutant could be made of its changed lines" };
    measured.made = chosen.length;
    for (const [index, mutant] of chosen.entries()) {
      checkInterrupted(ctx.signal);
      if (index > 0 && input.deadline !== undefined && Date.now() >= input.deadline) {
        measured.unrun = chosen.length - index;
        break;
      }
      const path = join(worktree, mutant.file);
      const original = readFileSync(path);
      writeFileSync(path, mutant.source);
      try {
        const started = Date.now();
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
        for (const file of hidden) {
          if (!existsSync(join(worktree, file))) copyFileSync(join(ctx.root, HOLDOUT_DIR, packet.id, file), join(worktree, file));
        }
      }
    }
    // What was not run was not made: `made` counts the mutants judged.
    return { ...measured, made: chosen.length - (measured.unrun ?? 0) };
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

/** Every mutant of the lines the packet's squash added, in a checkout of `commit`, in a stable order (the reviewer canary makes one again by its place). */
export async function mutantsOf(worktree: string, commit: string, packet: Packet): Promise<Mutant[]> {
  const all: Mutant[] = [];
  for (const file of await mutableFiles(worktree, commit, packet)) {
    const lines = new Set(file.added.map((added) => added.line));
    const path = join(worktree, file.path);
    all.push(...(file.path.endsWith(".py") ? await pythonMutants(file.path, path, lines) : jsMutants(file.path, readFileSync(path, "utf8"), lines)));
  }
  return all;
}

/** A mutant is killed when the run breaks, or a planted or hidden case that passed on the landed tree fails (or its file no longer loads). */
function killedBy(run: TestRun, landed: TestRun & { ok: true }, files: readonly string[], surfaceDir: string): boolean {
  if (!run.ok) return true;
  for (const [gate, measured] of run.runs) {
    const found = plantedCases({ files, surfaceDir, baseline: landed.runs.get(gate)?.results ?? [], now: measured.results, only: measured.alone === true });
    if (found.cases.length > 0 || found.counts.some((count) => count.loadError)) return true;
  }
  return false;
}

const PYTHON_MUTATOR = fileURLToPath(new URL("../../src/planning/mutate_python.py", import.meta.url));

/** The Python file's mutants, made by the bundled AST mutator (the file is parsed, never run); none when python3 cannot parse it. */
async function pythonMutants(file: string, path: string, lines: ReadonlySet<number>): Promise<Mutant[]> {
  const made = await execa("python3", [PYTHON_MUTATOR, path, JSON.stringify([...lines]), "500"], { reject: false, timeout: 60_000 });
  if (made.exitCode !== 0) return [];
  const parsed = JSON.parse(String(made.stdout)) as { line: number; description: string; source: string }[];
  return parsed.map((mutant) => ({ file, ...mutant }));
}
