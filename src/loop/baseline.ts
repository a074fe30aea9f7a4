import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { runCommandGate, TESTS_PLACEHOLDER } from "../gates/command.js";
import type { TestResult } from "../gates/junit.js";
import { realCases } from "../gates/test-compare.js";
import { wholeTreeGates } from "../gates/whole-tree.js";
import { gitReadObjects, orThrow, resolveCommit } from "../git/repo.js";
import { createWorktree, removeWorktree } from "../git/worktree.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import { STATE_DIR } from "../ledger/store.js";
import { PACKETS_DIR } from "../packet/load.js";
import { checkInterrupted, type RunContext, worktreesDir } from "./context.js";
import { installSurface } from "./prepare.js";

/**
 * `red`: the whole-tree gates red at the tip that the caller let be (a packet's `repairs`): then the
 * baseline is not cached, as a cached one says every whole-tree gate was green.
 */
export type Baseline = { ok: true; results: Map<string, TestResult[]>; cached: boolean; red?: string[]; reads?: string[] } | { ok: false; reason: string };

/** One tests gate's raw run: its per-test results (repository-relative ids) and how the runner exited. */
export interface TestGateRun {
  results: TestResult[];
  exitCode: number;
  tail: string | undefined;
  /** The run named the planted files alone ({tests}): the rest of the suite did not run. */
  alone?: true;
  /** Traced: the worktree's files the run read. */
  reads?: string[];
}

export type TestRun = { ok: true; runs: Map<string, TestGateRun> } | { ok: false; reason: string };

interface CacheFile {
  /** The tree the tests saw (`testedTree`), and the commit it was measured at. */
  tree: string;
  commit: string;
  key: string;
  results: Record<string, TestResult[]>;
  /** The tree's files the tests gates and whole-tree gates read there (traced), when they were. */
  reads?: string[];
}

/**
 * The per-test results of the surface's tests gates at `commit`, measured in
 * a checkout of exactly that commit and cached under the tree the tests see
 * there (`testedTree`) and the gate commands: a commit that changes only
 * packets reuses the baseline of the one before. `checkout` is such a checkout when the caller has one (a fresh
 * task worktree before planting); otherwise a scratch worktree is made for it.
 * A baseline that cannot run the suite is an error, never an empty baseline.
 */
export async function measureBaseline(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { surface: Surface; commit: string; runDir: string; checkout?: string; outside?: boolean; repairs?: readonly string[] },
): Promise<Baseline> {
  const tree = await testedTree(ctx.root, input.commit);
  const cacheFile = baselineFile(ctx.root, tree, input.surface);
  const key = baselineKey(input.surface);
  try {
    const cached = JSON.parse(readFileSync(cacheFile, "utf8")) as CacheFile;
    if (cached.key === key && cached.tree === tree) return { ok: true, results: new Map(Object.entries(cached.results)), cached: true, ...(cached.reads ? { reads: cached.reads } : {}) };
  } catch {
    // no usable cache: measure
  }
  const runDir = join(input.runDir, `baseline-${input.commit.slice(0, 10)}`);
  const measured = input.checkout ? await measureIn(ctx, { ...input, worktree: input.checkout, runDir }) : await measureInScratch(ctx, { ...input, runDir });
  if (!measured.ok || measured.red?.length) return measured;
  writeBaseline(ctx.root, { tree, commit: input.commit }, input.surface, measured.results, measured.reads);
  return { ...measured, cached: false };
}

function baselineFile(root: string, tree: string, surface: Surface): string {
  return join(root, STATE_DIR, "baselines", `${tree}-${surface.name}.json`);
}

/**
 * What the tests see of `commit`: a digest of its root tree without the
 * packets directory (packet files and their planted tests are read by the
 * factory, not by the suite, and are planted into a task's tree only after
 * its baseline). Two commits with the same digest have the same baseline.
 */
export async function testedTree(root: string, commit: string): Promise<string> {
  const args = ["ls-tree", "-z", "--full-tree", commit];
  const listing = orThrow(root, await gitReadObjects(root, [commit], args), args);
  return testedTreeOf(listing);
}

/** Pure: the digest of a root tree's `ls-tree -z` listing without its packets entry. */
export function testedTreeOf(listing: string): string {
  const kept = listing.split("\0").filter((entry) => entry !== "" && entry.slice(entry.indexOf("\t") + 1) !== PACKETS_DIR);
  return createHash("sha256").update(kept.join("\0")).digest("hex");
}

/** The cache holds for these exact gate commands: the tests gates' results, and the whole-tree gates green. */
function baselineKey(surface: Surface): string {
  return [...surface.gates.filter((gate) => gate.tests).map((gate) => gate.run), ...wholeTreeGates(surface).map((gate) => `whole-tree: ${gate.run}`)].join("\n");
}

/** Whether a surface has anything to measure at the tip: tests gates, or whole-tree gates that must be green there. */
export function hasBaseline(surface: Surface): boolean {
  return surface.gates.some((gate) => gate.tests) || wholeTreeGates(surface).length > 0;
}

function writeBaseline(root: string, at: { tree: string; commit: string }, surface: Surface, results: ReadonlyMap<string, TestResult[]>, reads?: readonly string[]): void {
  mkdirSync(join(root, STATE_DIR, "baselines"), { recursive: true });
  const file: CacheFile = { ...at, key: baselineKey(surface), results: Object.fromEntries(results), ...(reads ? { reads: [...reads] } : {}) };
  writeFileSync(baselineFile(root, at.tree, surface), JSON.stringify(file));
}

/**
 * The gate results of landed work as the baseline of the commit it landed
 * as: the squash has exactly the gated tree, so the next packet at that tip
 * need not run the suite again. Only a full-suite run of every tests gate
 * seeds (a `{files}` run saw part of it), and only one a baseline would
 * accept; the tree landed green, so its whole-tree gates passed (a surface
 * with whole-tree gates and no tests gate seeds that alone: its lint or
 * build is not run again on the tip it made). Returns whether it seeded.
 */
export async function seedBaseline(root: string, input: { commit: string; surface: Surface; results: ReadonlyMap<string, TestResult[]>; reads?: readonly string[] }): Promise<boolean> {
  if (!hasBaseline(input.surface)) return false;
  const gates = input.surface.gates.filter((gate) => gate.tests);
  if (gates.some((gate) => gate.run.includes("{files}") || !input.results.has(gate.name))) return false;
  if (gates.some((gate) => baselineProblem({ results: input.results.get(gate.name) ?? [], exitCode: 0, tail: undefined }))) return false;
  writeBaseline(root, { tree: await testedTree(root, input.commit), commit: input.commit }, input.surface, input.results, input.reads);
  return true;
}

async function measureIn(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { surface: Surface; commit: string; runDir: string; worktree: string; outside?: boolean; repairs?: readonly string[] },
): Promise<Baseline> {
  const head = await resolveCommit(input.worktree, "HEAD");
  if (head !== input.commit) throw new Error(`a baseline for ${input.commit.slice(0, 10)} was to be measured in a checkout of ${head?.slice(0, 10)}`);
  const run = await runTests(ctx, input);
  if (!run.ok) return run;
  // The tip's suite must judge the same inside the sandbox as outside it, before any work is judged by it.
  const differs = input.outside ? await judgedOtherwiseInside(ctx, input, run.runs) : undefined;
  if (differs) return { ok: false, reason: differs };
  const red: string[] = [];
  // What the tip's tests and whole-tree gates read judges the work as the tip has it (loop/verdict-tree.ts).
  const reads = new Set([...run.runs.values()].flatMap((measured) => measured.reads ?? []));
  let traced = [...run.runs.values()].every((measured) => measured.reads !== undefined);
  for (const gate of wholeTreeGates(input.surface)) {
    const { report, reads: gateReads } = await measureGate(ctx, input, gate);
    for (const path of gateReads ?? []) reads.add(path);
    traced &&= gateReads !== undefined;
    // Red at the tip and repaired by a packet: its baseline, which that packet must turn green.
    if (report.status === "fail" && input.repairs?.includes(gate.name)) red.push(gate.name);
    else if (report.status !== "pass") {
      return {
        ok: false,
        reason: `gate "${gate.name}" is ${report.status === "fail" ? "red" : "broken"} at the tip ${input.commit.slice(0, 10)} before any work (${report.summary}): fix the tip, drop the gate, or queue a packet that repairs it (repairs = ["${gate.name}"])${report.tail ? `; its last lines:\n${report.tail}` : ""}`,
      };
    }
  }
  const results = new Map<string, TestResult[]>();
  for (const [gate, measured] of run.runs) {
    const problem = baselineProblem(measured);
    if (problem) {
      return { ok: false, reason: `test gate "${gate}" cannot run the suite at ${input.commit.slice(0, 10)}: ${problem}${measured.tail ? `; its last lines:\n${measured.tail}` : ""}` };
    }
    results.set(gate, measured.results);
  }
  return { ok: true, results, cached: false, ...(red.length ? { red } : {}), ...(traced ? { reads: [...reads].sort() } : {}) };
}

let scratchCount = 0;

/**
 * A checkout of `commit` of its own, installed like a task worktree (`label` names its directory), for
 * `use`; removed afterwards. An install that failed is `use`'s to say (its message), with no checkout.
 */
export async function inScratch<T>(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { surface: Surface; commit: string; runDir: string; label: string },
  use: (checkout: { worktree: string } | { installError: string }) => Promise<T>,
): Promise<T> {
  // Its own path per checkout: two packets landing at once may both measure the same tip.
  const worktree = join(worktreesDir(ctx.root), `_${input.label}-${input.commit.slice(0, 12)}-${process.pid}-${++scratchCount}`);
  await createWorktree(ctx.root, { path: worktree, start: input.commit });
  try {
    mkdirSync(input.runDir, { recursive: true });
    const installError = await installSurface(ctx, worktree, input.surface, input.runDir);
    checkInterrupted(ctx.signal);
    return await use(installError ? { installError } : { worktree });
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/** The baseline measured in a scratch checkout of `commit`. */
function measureInScratch(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { surface: Surface; commit: string; runDir: string; outside?: boolean; repairs?: readonly string[] },
): Promise<Baseline> {
  return inScratch(ctx, { ...input, label: "baseline" }, async (checkout) =>
    "installError" in checkout ? { ok: false, reason: checkout.installError } : await measureIn(ctx, { ...input, worktree: checkout.worktree }),
  );
}

/**
 * Runs the tests gates of a checkout once more outside the sandbox (the tip's own code, which the team's CI
 * runs as it is), and says which tests pass there but failed in `inside` and, run inside again, fail there
 * again, with the remedy; undefined when none does, or the sandbox is off.
 */
export async function judgedOtherwiseInside(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { surface: Surface; runDir: string; worktree: string },
  inside: ReadonlyMap<string, TestGateRun>,
): Promise<string | undefined> {
  if (ctx.config.sandbox.kind === "none") return undefined;
  const unsandboxed = await runTests({ ...ctx, config: { ...ctx.config, sandbox: { ...ctx.config.sandbox, kind: "none" } } }, { ...input, runDir: join(input.runDir, "outside-the-sandbox") });
  let differ = unsandboxed.ok ? sandboxOnlyFailures(inside, unsandboxed.runs) : [];
  if (differ.length === 0 || !unsandboxed.ok) return undefined;
  // One run each side can disagree by chance (a slow test on a loaded machine): the suite runs inside once more,
  // and only what fails inside both times while it passed outside is the sandbox's.
  const again = await runTests(ctx, { ...input, runDir: join(input.runDir, "inside-the-sandbox-again") });
  if (again.ok) {
    const still = new Set(sandboxOnlyFailures(again.runs, unsandboxed.runs));
    differ = differ.filter((id) => still.has(id));
  }
  if (differ.length === 0) return undefined;
  const named = `${differ.slice(0, 5).join(", ")}${differ.length > 5 ? `, and ${differ.length - 5} more` : ""}`;
  return `the tip's suite judges differently inside the sandbox: ${differ.length} test(s) pass outside the sandbox and fail inside (${named}), so work judged by it would be blamed for the sandbox; allow what they need in [sandbox] (home = [...] for a tool under HOME, network = true on the surface), or leave them out of the gate`;
}

/** Pure: per tests gate, the cases that pass outside the sandbox and fail inside it (`gate: id`, or the id alone for a surface's only gate). */
export function sandboxOnlyFailures(inside: ReadonlyMap<string, TestGateRun>, outside: ReadonlyMap<string, TestGateRun>): string[] {
  const differ: string[] = [];
  for (const [gate, run] of inside) {
    const passedOutside = new Set(
      realCases(outside.get(gate)?.results ?? [])
        .filter((result) => result.outcome === "passed")
        .map((result) => result.id),
    );
    for (const result of realCases(run.results)) if (result.outcome === "failed" && passedOutside.has(result.id)) differ.push(inside.size > 1 ? `${gate}: ${result.id}` : result.id);
  }
  return differ;
}

/** Pure: why a baseline run did not run the suite (no real test case, or a failure exit with no failing case). */
export function baselineProblem(run: TestGateRun): string | undefined {
  const cases = realCases(run.results);
  if (cases.length === 0) {
    const why = run.results.length ? `it ran no test (the runner could not collect ${run.results.map((result) => result.id).join(", ")})` : "it ran no test";
    return `${why}${collectionCause(run.tail ?? "")}`;
  }
  if (run.exitCode !== 0 && !cases.some((result) => result.outcome === "failed")) {
    return `the runner exited ${run.exitCode} while its report shows no failing test (a usage error, an interruption or a crash)`;
  }
  return undefined;
}

/**
 * Pure: the first error the runner printed while collecting (`ModuleNotFoundError: No module named 'calc'`),
 * and for an import that fails, the fix: the tests cannot import the project as the gate runs them.
 */
export function collectionCause(tail: string): string {
  const error = tail
    .split("\n")
    .find((line) => /^\s*(E\s+)?\w*(Error|Exception): /.test(line))
    ?.replace(/^\s*(E\s+)?/, "")
    .trim();
  if (!error) return "";
  const fix = /^(ModuleNotFoundError|ImportError): /.test(error)
    ? ': the tests cannot import the project as the gate runs them; give the surface an install that installs it (install = "python3 -m pip install -e .") or put its source on the path (a src layout: PYTHONPATH=src before the command, as `factory init` writes it)'
    : "";
  return `: ${error}${fix}`;
}

/** Runs the surface's tests gates without comparing: raw per-test results, or why they could not be had. */
export async function runTests(ctx: Pick<RunContext, "root" | "config" | "signal">, input: { worktree: string; surface: Surface; runDir: string; only?: readonly string[] }): Promise<TestRun> {
  mkdirSync(input.runDir, { recursive: true });
  const runs = new Map<string, TestGateRun>();
  const prefix = input.surface.dir === "." ? "" : `${input.surface.dir}/`;
  const only = (input.only ?? []).filter((file) => file.startsWith(prefix)).map((file) => file.slice(prefix.length));
  for (const gate of input.surface.gates.filter((candidate) => candidate.tests)) {
    // A gate that can name files runs only `only` (the planted files): the rest of the suite has its baseline.
    const alone = only.length > 0 && new RegExp(TESTS_PLACEHOLDER.source).test(gate.run);
    const { report, results, exitCode, reads } = await measureGate(ctx, input, gate, alone ? only : undefined);
    if (!results || exitCode === undefined)
      return { ok: false, reason: `test gate "${gate.name}" (${report.command ?? gate.run}) could not be measured: ${report.summary}${report.tail ? `; its last lines:\n${report.tail}` : ""}` };
    runs.set(gate.name, { results, exitCode, tail: report.tail, ...(alone ? { alone: true } : {}), ...(reads ? { reads } : {}) });
  }
  return { ok: true, runs };
}

/** One gate run on the whole checkout, in the sandbox, judged by no baseline: what a measurement sees. */
async function measureGate(ctx: Pick<RunContext, "root" | "config" | "signal">, input: { worktree: string; surface: Surface; runDir: string }, gate: GateConfig, tests?: readonly string[]) {
  const run = await runCommandGate({
    gate,
    ...(tests ? { tests } : {}),
    surface: input.surface,
    worktree: input.worktree,
    changed: [],
    runDir: input.runDir,
    timeoutMs: gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
    baseline: undefined,
    signal: ctx.signal,
    // A measurement of the whole suite is traced: what it read is what judges work on this tip.
    trace: !tests,
    ...sandboxed(ctx, input.worktree, input.surface.network),
  });
  checkInterrupted(ctx.signal);
  return run;
}
