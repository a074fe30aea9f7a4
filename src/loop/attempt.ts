import { lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { correctionPrompt, implementerPrompt } from "../agents/prompt.js";
import { projectTemplate } from "../agents/prompt-templates.js";
import { type ImplementerResult, validateResult } from "../agents/result.js";
import type { Limits } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import { unearnedLockFiles } from "../gates/lock-files.js";
import { AGENT_OUTPUTS } from "../gates/paths.js";
import { plantedTestFiles } from "../gates/test-compare.js";
import { builtinReport, type GateReport, isGreen } from "../gates/types.js";
import { recordDependencies } from "../git/dependency-dirs.js";
import { reviewableDiff } from "../git/diff.js";
import { commonGitDir } from "../git/dirs.js";
import { GitFileTampered } from "../git/git-file.js";
import { nestedRepositories } from "../git/nested.js";
import { readFileAt } from "../git/repo.js";
import { carryWork, commitWorktree, discardPaths, restoreWorktree, worktreeStatus } from "../git/worktree.js";
import { HOLDOUT_DIR, holdoutFiles, holdoutProblem } from "../guards/holdout.js";
import { changedOutside, fingerprintOutside, isUsersOwn, snapshotHooks, undoHookChanges } from "../guards/tripwire.js";
import type { EventBody } from "../ledger/events.js";
import type { Packet } from "../packet/types.js";
import { crashPoint } from "../util/crash-point.js";
import { freeSpace } from "../util/resources.js";
import { formatSize } from "../util/size.js";
import { callAgent, surfaceCommands } from "./agent-call.js";
import { hasBaseline, measureBaseline } from "./baseline.js";
import { checkInterrupted, type RunContext, surfaceOf } from "./context.js";
import { type AttemptEnd, agentCallEnd } from "./decide.js";
import { SPACE_BEFORE_AGENT } from "./disk-filled.js";
import { type GateRun, runGates } from "./gates.js";
import { checkPlantedTests } from "./planted-check.js";
import { installSurface, type Planting, plant, prepareWorktree } from "./prepare.js";
import { recordReruns } from "./reruns.js";
import { review } from "./review.js";
import { runHoldout } from "./run-holdout.js";
import { checkSpecDrift } from "./spec-drift.js";
import { assertWorktreeThere } from "./worktree-removed.js";

export const RESULT_OUTPUT = ".factory/result.json";
/** A project's conventions, added to every prompt when the file exists at the tip. */
export const CONVENTIONS_FILE = ".factory/conventions.md";

export interface AttemptInput {
  packet: Packet;
  attempt: number;
  tip: string;
  feedback: readonly string[];
  /** A person's answers to this version's questions: told to the implementer, and named in the landing commit's trailers. */
  answers?: readonly { question: string; answer: string; by: string; at?: string }[];
  runDir: string;
  /** The last attempt's gated work, to continue rather than start over (`retry_from = "last"`). */
  continueFrom?: { attempt: number; commit: string; from: string };
}

export interface AttemptReport {
  end: AttemptEnd;
  worktree?: string;
  forkCommit: string;
  /** The gated commit: HEAD of the task branch after the attempt and its fixes. */
  commit?: string;
  gates?: GateReport[];
  /** The tests gates' per-test results on the gated commit. */
  tests?: Map<string, TestResult[]>;
  planting?: Planting;
}

/**
 * One attempt, end to end: spec drift → worktree → install → baseline →
 * restore → plant → planted tests must run and fail → restore → implementer →
 * result contract → commit (the agent's work only) → gates → review. It returns how the attempt ended; deciding what follows
 * (retry, block, merge, hold) is decide.ts's job.
 */
export async function runAttempt(ctx: RunContext, input: AttemptInput): Promise<AttemptReport> {
  try {
    return await attemptSteps(ctx, input);
  } catch (error) {
    // Its .git file rewritten: the factory never followed it, and the packet blocks as tampering.
    if (error instanceof GitFileTampered)
      return { forkCommit: input.tip, end: { kind: "reached-outside", reason: `something in the worktree (the agent, or code it wrote) rewrote its .git file: ${error.message}` } };
    throw error;
  }
}

/** The attempt's steps, in order: each either ends the attempt (its end) or leaves the next step what it made. */
async function attemptSteps(ctx: RunContext, input: AttemptInput): Promise<AttemptReport> {
  mkdirSync(input.runDir, { recursive: true });
  const run = new AttemptRun(ctx, input);
  const end =
    (await run.prepare()) ??
    (await run.baseline()) ??
    (await run.plantTests()) ??
    (await run.continueWork()) ??
    (await run.implement()) ??
    (await run.commit()) ??
    (await run.gate()) ??
    (await run.review());
  return { ...run.so, end };
}

/** One attempt's state between its steps. */
class AttemptRun {
  /** What the report says so far (the worktree, the planting, the gated commit). */
  so: Omit<AttemptReport, "end">;
  private readonly surface: ReturnType<typeof surfaceOf>;
  private worktree = "";
  private tripwire: Tripwire | undefined;
  private baselineResults = new Map<string, TestResult[]>();
  /** The whole-tree gates ran green on the tip (measureBaseline refuses otherwise). */
  private tipProven = false;
  /** What the tip's tests read, when traced. */
  private tipReads: string[] | undefined;
  /** The worktree was made from the tip: only an install or a baseline run in it can have left anything. */
  private ranInWorktree = false;
  private planting: Planting | undefined;
  private continued: number | undefined;
  private conventions: string | undefined;
  private reviewerTemplate: string | undefined;
  private result: ImplementerResult | undefined;
  private changedNow: { path: string }[] = [];
  private attemptCommit = "";
  private nested: string[] = [];
  private gated: GateRun | undefined;

  constructor(
    private readonly ctx: RunContext,
    private readonly input: AttemptInput,
  ) {
    this.so = { forkCommit: input.tip };
    this.surface = surfaceOf(ctx.config, input.packet);
  }

  private step(name: string, detail?: string): void {
    this.ctx.emit({ kind: "step", packet: this.input.packet.id, attempt: this.input.attempt, step: name, ...(detail ? { detail } : {}) });
  }

  private outside(who: string): Promise<AttemptEnd | undefined> {
    return (this.tripwire as Tripwire).reachedOutside(who);
  }

  /** The spec has not moved, the hidden tests are hidden; the worktree, its install, and the look outside from here. */
  async prepare(): Promise<AttemptEnd | undefined> {
    const { ctx, input, surface } = this;
    const { packet, tip } = input;
    const drift = await checkSpecDrift(ctx.root, packet, tip);
    if (drift) return { kind: "spec-drift", reason: drift };
    const exposed = await holdoutProblem(ctx.root, packet.id);
    if (exposed) return { kind: "defective-packet", reason: exposed };

    this.step("worktree", `${packet.id} from ${ctx.branch} @ ${tip.slice(0, 10)}`);
    this.worktree = await prepareWorktree(ctx, packet, tip);
    this.so = { ...this.so, worktree: this.worktree };
    if (surface) {
      const installError = await installSurface(ctx, this.worktree, surface, input.runDir);
      checkInterrupted(ctx.signal);
      if (installError) return { kind: "environment-error", reason: installError };
    }
    checkInterrupted(ctx.signal);
    // After the install (it may fill caches in HOME), before anything of the packet's runs.
    this.tripwire = await Tripwire.start(ctx, input, this.worktree, (name, detail) => this.step(name, detail));
    this.ranInWorktree = Boolean(surface?.install);
    return undefined;
  }

  /** The tip's tests and whole-tree gates, measured in the worktree (or cached), then the worktree restored. */
  async baseline(): Promise<AttemptEnd | undefined> {
    const { ctx, input, surface } = this;
    const { packet, tip } = input;
    if (surface && hasBaseline(surface)) {
      this.step("baseline");
      const measured = await measureBaseline(ctx, { surface, commit: tip, runDir: input.runDir, checkout: this.worktree, repairs: packet.repairs });
      if (!measured.ok) return { kind: "environment-error", reason: `baseline: ${measured.reason}` };
      this.ranInWorktree ||= !measured.cached;
      this.baselineResults = measured.results;
      this.tipReads = measured.reads;
      this.tipProven = true;
      const all = [...measured.results.values()].flat();
      await ctx.ledger.append([
        {
          kind: "baseline-measured",
          packet: packet.id,
          commit: tip,
          cached: measured.cached,
          passed: all.filter((test) => test.outcome === "passed").length,
          failed: all.filter((test) => test.outcome === "failed").length,
        },
      ]);
    }
    // The implementer starts from exactly the planted tree: nothing install or the baseline left is its work.
    if (this.ranInWorktree) await restoreWorktree(this.worktree);
    return undefined;
  }

  /** The planted tests committed; they must run and fail, and the hidden tests must fail, before any work. */
  async plantTests(): Promise<AttemptEnd | undefined> {
    const { ctx, input, surface, worktree } = this;
    const { packet, tip } = input;
    let planting = await plant(ctx, worktree, packet, tip);
    this.so = { ...this.so, planting };
    crashPoint("run-after-plant");
    const testFiles = plantedTestFiles(planting.files, packet.supportFiles);
    if (surface && testFiles.length > 0) {
      const checked = await checkPlantedTests(ctx, { worktree, surface, baseline: this.baselineResults, testFiles, runDir: input.runDir, allowedPaths: packet.allowedPaths, tip });
      if (!checked.ok) return { kind: "defective-packet", reason: checked.reason };
      for (const file of checked.noCases)
        ctx.emit({ kind: "notice", packet: packet.id, message: `planted test ${file} yields no test case on this machine, as the tip's version did not: its tests are not checked here` });
      planting = { ...planting, cases: checked.cases };
      this.so = { ...this.so, planting };
      await restoreWorktree(worktree);
    }
    this.planting = planting;
    // Hidden tests that already pass before any work cannot tell right from wrong, like planted ones.
    const hidden = surface ? holdoutFiles(ctx.root, packet.id) : [];
    if (surface && hidden.length > 0) {
      const before = await runHoldout(ctx, { packet, worktree, surface, runDir: join(input.runDir, "holdout-before"), files: hidden });
      // Run with the whole suite, a planted file that does not load yet can stop the runner before the hidden files: no verdict then.
      if (before.ran === 0 && before.alone) return { kind: "defective-packet", reason: before.report.summary };
      if (before.ran > 0 && before.failed === 0) {
        const reason = `its hidden tests (${HOLDOUT_DIR}/${packet.id}/, ${before.ran} case(s)) all pass before any implementation, so they cannot tell right from wrong: make at least one fail without the change`;
        return { kind: "defective-packet", reason };
      }
    }
    if (planting.files.length > 0) {
      await ctx.ledger.append([{ kind: "planted", packet: packet.id, attempt: input.attempt, commit: planting.commit, files: planting.files, ...(planting.cases ? { cases: planting.cases } : {}) }]);
      this.step("planted", planting.files.join(", "));
    }
    checkInterrupted(ctx.signal);
    return undefined;
  }

  /** `retry_from = "last"`: the last attempt's work, carried into the worktree uncommitted, when it applies. */
  async continueWork(): Promise<AttemptEnd | undefined> {
    const { ctx, input } = this;
    const last = input.continueFrom;
    if (!last) return undefined;
    if (await carryWork(ctx.root, this.worktree, last)) {
      this.continued = last.attempt;
      await ctx.ledger.append([{ kind: "continued", packet: input.packet.id, attempt: input.attempt, fromAttempt: last.attempt, commit: last.commit }]);
      this.step("continues", `from attempt ${last.attempt}'s work (${last.commit.slice(0, 10)}), uncommitted in the worktree`);
    } else {
      this.step("continues", `attempt ${last.attempt}'s work does not apply at ${ctx.branch} @ ${input.tip.slice(0, 10)}; starting from the tip`);
    }
    return undefined;
  }

  /** The implementer, with the project's conventions and templates; then what it changed outside, and in the worktree. */
  async implement(): Promise<AttemptEnd | undefined> {
    const { ctx, input, worktree } = this;
    const { tip } = input;
    this.conventions = await readFileAt(ctx.root, tip, CONVENTIONS_FILE);
    const templates = { implementer: await projectTemplate(ctx.root, tip, "implementer"), reviewer: await projectTemplate(ctx.root, tip, "reviewer") };
    if (!templates.implementer.ok) return { kind: "environment-error", reason: templates.implementer.problem };
    if (!templates.reviewer.ok) return { kind: "environment-error", reason: templates.reviewer.problem };
    this.reviewerTemplate = templates.reviewer.template;
    // What the factory's own steps made (install, baseline, planted check) is all the gates will keep beside the commit.
    await recordDependencies(worktree);
    const implemented = await implement(ctx, {
      ...input,
      worktree,
      planted: (this.planting as Planting).files,
      ...(this.conventions ? { conventions: this.conventions } : {}),
      ...(this.continued ? { continued: this.continued } : {}),
      ...(templates.implementer.template ? { template: templates.implementer.template } : {}),
    });
    // The worktree's status (for the commit below) is read beside the look outside: another directory, another index.
    const [implementerOutside, changedNow] = await Promise.all([this.outside("the implementer"), settled(worktreeStatus(worktree, { task: true }))]);
    if (implementerOutside) return implementerOutside;
    if ("end" in implemented) return implemented.end;
    checkInterrupted(ctx.signal);
    if (changedNow instanceof Error) throw changedNow;
    this.result = implemented.result;
    this.changedNow = changedNow;
    return undefined;
  }

  /** The implementer's work committed: never a lock file without its manifest, a file too large, or a nested repository. */
  async commit(): Promise<AttemptEnd | undefined> {
    const { ctx, input, worktree } = this;
    const { packet, attempt } = input;
    const paths = this.changedNow.map((entry) => entry.path);
    const dropped = unearnedLockFiles(paths, packet.allowedPaths);
    if (dropped.length > 0) {
      await discardPaths(worktree, dropped);
      this.step("commit", `not committed: ${dropped.join(", ")} (a lock file is committed only with its manifest, both in scope)`);
    }
    // A file over max_file_size, or a change over max_attempt_size in all, never reaches `git add`: hashed, it would sit
    // in the repository's object store for good.
    const tooLarge = oversizedReport(changedSizes(worktree, paths), ctx.config.limits);
    if (tooLarge) return { kind: "gates-red", reports: [tooLarge] };
    this.nested = nestedRepositories(worktree); // never staged by the commit below; refused by the scope gate
    this.attemptCommit = await commitWorktree(worktree, `factory: attempt ${attempt} of ${packet.id}`, AGENT_OUTPUTS);
    // The factory's own git just read a tree the implementer wrote, outside the sandbox: looked at on its own,
    // so a change it caused is not blamed on the gates or the reviewer that run next.
    const committedOutside = await this.outside("the factory's git, committing the implementer's work (on a tree it wrote; or a process it left running),");
    if (committedOutside) return committedOutside;
    crashPoint("run-after-implementer");
    return undefined;
  }

  /** Every gate, run by the factory itself on the committed tree; each recorded; red, defective or reaching outside ends here. */
  async gate(): Promise<AttemptEnd | undefined> {
    const { ctx, input, worktree, surface } = this;
    const { packet, attempt, tip } = input;
    const planting = this.planting as Planting;
    this.step("gates");
    const gated = await runGates(ctx, {
      packet,
      attempt,
      surface,
      worktree,
      plantedCommit: planting.commit,
      planted: planting.files,
      plantedCases: planting.cases ?? {},
      nested: this.nested,
      baseline: this.baselineResults,
      tip,
      tipProven: this.tipProven,
      ...(this.tipReads ? { tipReads: this.tipReads } : {}),
      runDir: input.runDir,
    });
    this.gated = gated;
    await recordReruns(ctx, packet.id, attempt, gated.reruns);
    // The look outside starts now, beside the patch's read: the gates' code has ended either way.
    const gatesReachedOutside = settled(this.outside("the code run by the gates")); // used below, after the gates are recorded
    writeFileSync(join(input.runDir, "diff.patch"), await reviewableDiff(worktree, tip, gated.commit));
    crashPoint("run-after-gates");
    this.so = { ...this.so, commit: gated.commit, gates: gated.reports, tests: gated.tests };
    if (gated.commit !== this.attemptCommit) this.step("gates", `ran on ${gated.commit.slice(0, 10)} (after auto-fixes)`);
    for (const report of gated.reports) await ctx.ledger.append([gateFinished(packet.id, attempt, report)]);
    const gatesOutside = await gatesReachedOutside;
    if (gatesOutside instanceof Error) throw gatesOutside;
    if (gatesOutside) return gatesOutside;
    if (gated.defective) return { kind: "defective-packet", reason: gated.defective };
    if (!isGreen(gated.reports)) return { kind: "gates-red", reports: gated.reports };
    checkInterrupted(ctx.signal);
    return undefined;
  }

  /** The reviewer's ruling on every invariant, overridden where the facts disagree; then the last look outside. */
  async review(): Promise<AttemptEnd> {
    const { ctx, input } = this;
    const gated = this.gated as GateRun;
    const end = await review(ctx, {
      packet: input.packet,
      attempt: input.attempt,
      worktree: this.worktree,
      runDir: input.runDir,
      forkCommit: input.tip,
      commit: gated.commit,
      gates: gated.reports,
      result: this.result as ImplementerResult,
      lastFeedback: input.feedback,
      ...(this.conventions ? { conventions: this.conventions } : {}),
      ...(this.reviewerTemplate ? { template: this.reviewerTemplate } : {}),
    });
    return (await this.outside("the reviewer")) ?? end;
  }
}

/** A gate's report as the ledger records it. */
function gateFinished(packet: string, attempt: number, report: GateReport): EventBody {
  return {
    kind: "gate-finished",
    packet,
    attempt,
    gate: report.name,
    result: report.status,
    durationMs: report.durationMs,
    ...(report.command ? { command: report.command } : {}),
    ...(report.exitCode !== undefined ? { exitCode: report.exitCode } : {}),
    detail: report.summary,
  };
}

/**
 * What changed outside the worktree while a step of the attempt ran. Inside the sandbox nothing of the packet's can
 * write to the checkout or `.git`: a change there is the user's, recorded and the run carries on; anything else ends the attempt.
 */
class Tripwire {
  private constructor(
    private readonly ctx: RunContext,
    private readonly input: AttemptInput,
    private readonly watched: Parameters<typeof fingerprintOutside>[0],
    private outside: Awaited<ReturnType<typeof fingerprintOutside>>,
    private readonly commonDir: string,
    private readonly hooks: ReturnType<typeof snapshotHooks>,
    private readonly step: (name: string, detail?: string) => void,
  ) {}

  static async start(ctx: RunContext, input: AttemptInput, worktree: string, step: (name: string, detail?: string) => void): Promise<Tripwire> {
    const watched = { root: ctx.root, worktree, target: ctx.branch, home: homedir() };
    const outside = await fingerprintOutside(watched);
    const commonDir = await commonGitDir(ctx.root);
    return new Tripwire(ctx, input, watched, outside, commonDir, snapshotHooks(commonDir), step);
  }

  async reachedOutside(who: string): Promise<AttemptEnd | undefined> {
    const { ctx, input } = this;
    const { changes, after } = await changedOutside(this.watched, this.outside);
    this.outside = after;
    const contained = ctx.config.sandbox.kind !== "none";
    const users = contained ? changes.filter(isUsersOwn) : [];
    if (users.length > 0) {
      await ctx.ledger.append([{ kind: "outside-change-seen", packet: input.packet.id, attempt: input.attempt, changes: users }]);
      this.step("outside", `while ${who} ran, your repository changed (yours, not the packet's; the run carries on): ${listSome(users)}`);
    }
    const blamed = changes.filter((change) => !users.includes(change));
    if (blamed.length === 0) return undefined;
    // A hook that appeared would run at the user's next commit: taken out before the packet blocks.
    const undone = undoHookChanges(this.commonDir, this.hooks, blamed, join(input.runDir, "undone-hooks"));
    return { kind: "reached-outside", reason: `${who} reached outside its worktree: ${listSome(undone)}` };
  }
}

/** The changed paths that are regular files, with their sizes. */
function changedSizes(worktree: string, paths: readonly string[]): { path: string; size: number }[] {
  const found: { path: string; size: number }[] = [];
  for (const path of paths) {
    try {
      const stat = lstatSync(join(worktree, path));
      if (stat.isFile()) found.push({ path, size: stat.size });
    } catch {
      // deleted: nothing to hash
    }
  }
  return found;
}

/**
 * Pure: the scope gate's report on changed files refused before the commit: each over max_file_size, or,
 * when none is, all of them together over max_attempt_size (30 files of 9 MB are each under the first).
 * Undefined when the change may be committed.
 */
export function oversizedReport(files: readonly { path: string; size: number }[], limits: Pick<Limits, "maxFileSizeBytes" | "maxAttemptSizeBytes">): GateReport | undefined {
  const never = "not committed, so it never entered the repository's object store";
  const each = files.filter((file) => file.size > limits.maxFileSizeBytes);
  if (each.length > 0) {
    return builtinReport(
      "scope",
      each.map(({ path, size }) => ({ file: path, message: `is ${formatSize(size)}, over [limits] max_file_size (${formatSize(limits.maxFileSizeBytes)}); ${never}` })),
      "",
    );
  }
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (total <= limits.maxAttemptSizeBytes) return undefined;
  const largest = [...files].sort((a, b) => b.size - a.size);
  const named = largest.slice(0, 3).map((file) => `${file.path} (${formatSize(file.size)})`);
  const message = `the attempt's ${files.length} changed files add up to ${formatSize(total)}, over [limits] max_attempt_size (${formatSize(limits.maxAttemptSizeBytes)}): the largest are ${named.join(", ")}; ${never}`;
  return builtinReport("scope", [{ file: largest[0]?.path ?? ".", message }], "");
}

/** The first five of a list of changes, and how many more. */
function listSome(changes: readonly string[]): string {
  return `${changes.slice(0, 5).join(", ")}${changes.length > 5 ? ` and ${changes.length - 5} more` : ""}`;
}

/** A promise's value, or its error as a value: for a read started early whose failure matters only if it is used. */
function settled<T>(promise: Promise<T>): Promise<T | Error> {
  return promise.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
}

/** The free space the implementer started with, where its worktree is: a disk it fills itself is its own fault (see disk-filled.ts). */
function recordSpaceBeforeAgent(worktree: string, runDir: string): void {
  const space = freeSpace(worktree);
  if (space) writeFileSync(join(runDir, SPACE_BEFORE_AGENT), JSON.stringify(space));
}

/** The implementer and its result file: how the attempt ended, or its valid `complete` result. */
async function implement(
  ctx: RunContext,
  input: AttemptInput & { worktree: string; planted: string[]; conventions?: string; continued?: number; template?: string },
): Promise<{ end: AttemptEnd } | { result: ImplementerResult }> {
  const { packet, attempt } = input;
  const surface = surfaceOf(ctx.config, packet);
  const call = {
    role: "implementer" as const,
    packet: packet.id,
    attempt,
    tier: packet.tier,
    worktree: input.worktree,
    runDir: input.runDir,
    output: RESULT_OUTPUT,
    allowedCommands: surfaceCommands(surface),
  };
  const prompt = implementerPrompt(
    {
      packet,
      attempt,
      planted: input.planted,
      plantedTests: plantedTestFiles(input.planted, packet.supportFiles),
      feedback: input.feedback,
      outputPath: RESULT_OUTPUT,
      ...(surface ? { gates: surface.gates, surfaceDir: surface.dir } : {}),
      ...(input.conventions ? { conventions: input.conventions } : {}),
      ...(input.continued ? { continued: input.continued } : {}),
      ...(input.answers?.length ? { answers: input.answers } : {}),
    },
    input.template,
  );
  recordSpaceBeforeAgent(input.worktree, input.runDir);
  let result = await callAgent(ctx, { ...call, round: 0, prompt });
  if (result.outcome.status !== "ok") return { end: agentCallEnd("implementer", result.outcome, { now: Date.now(), maxWaitMs: ctx.config.limits.rateLimitWaitMs }) };
  let check = validateResult(result.json, packet.id);
  // No result because the worktree itself went away (a cleaner of its directory): no paid correction for it.
  if (!check.ok) assertWorktreeThere(input.worktree);
  if (!check.ok) {
    const sessionId = result.outcome.sessionId;
    result = await callAgent(ctx, { ...call, round: 1, prompt: correctionPrompt("result", RESULT_OUTPUT, check.errors), ...(sessionId ? { resumeSession: sessionId } : {}) });
    check = validateResult(result.json, packet.id);
  }
  if (!check.ok) return { end: { kind: "result-contract", errors: check.errors } };
  const verification = check.result.verification !== undefined && check.result.verification !== null;
  await ctx.ledger.append([{ kind: "implementer-reported", packet: packet.id, attempt: input.attempt, status: check.result.status, verification }]);
  if (check.result.status === "blocked") return { end: { kind: "implementer-blocked", reason: check.result.blockedReason ?? check.result.summary } };
  if (check.result.status === "question" && check.result.question)
    return { end: { kind: "implementer-question", question: check.result.question.text, suggestions: check.result.question.suggestions } };
  if (check.result.status === "failed") return { end: { kind: "implementer-failed", reason: `the implementer reports failure: ${check.result.summary}` } };
  return { result: check.result };
}
