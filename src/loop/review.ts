import { correctionPrompt, reviewContract, reviewerPrompt } from "../agents/prompt.js";
import type { ImplementerResult } from "../agents/result.js";
import { AGENT_OUTPUTS, matchesAny } from "../gates/paths.js";
import type { GateReport } from "../gates/types.js";
import { reviewableDiff } from "../git/diff.js";
import { gitRun, readFileAt } from "../git/repo.js";
import { worktreeState } from "../git/worktree.js";
import type { Packet } from "../packet/types.js";
import { lineCount, parseEvidence, type Review, validateReview } from "../review/contract.js";
import { effectiveVerdict, rulingCounts } from "../review/verdict.js";
import { callAgent } from "./agent-call.js";
import type { RunContext } from "./context.js";
import { type AttemptEnd, agentCallEnd } from "./decide.js";

export const REVIEW_OUTPUT = ".factory/review.json";

export interface ReviewInput {
  packet: Packet;
  attempt: number;
  worktree: string;
  runDir: string;
  forkCommit: string;
  commit: string;
  gates: GateReport[];
  /** The implementer's own account, shown to the reviewer as a claim to check. */
  result?: ImplementerResult;
  /** Why the last attempt was sent back (this attempt's feedback). */
  lastFeedback?: readonly string[];
  conventions?: string;
  /** The project's reviewer template (`.factory/prompts/reviewer.md`), checked; the bundled one otherwise. */
  template?: string;
}

/**
 * The reviewer rules on every invariant, in a fresh session, with a contract
 * correction round. The factory then checks its evidence against the tree
 * and computes the effective verdict; a reviewer that changes the worktree
 * has its verdict discarded.
 */
export async function review(ctx: RunContext, input: ReviewInput): Promise<AttemptEnd> {
  const { packet } = input;
  const diff = await reviewableDiff(input.worktree, input.forkCommit, input.commit);
  const prompt = reviewerPrompt(
    {
      packet,
      diff,
      gates: input.gates,
      outputPath: REVIEW_OUTPUT,
      ...(input.result ? { result: input.result } : {}),
      ...(input.lastFeedback ? { lastFeedback: input.lastFeedback } : {}),
      ...(input.conventions ? { conventions: input.conventions } : {}),
    },
    input.template,
  );
  // A reviewer's mistakes cost review calls, never the implementer's attempt:
  // a correction round, then the next tier once, then the packet blocks.
  const tiers = [packet.reviewer, ...escalationTier(ctx, packet.reviewer)];
  let problem = "";
  for (const [index, tier] of tiers.entries()) {
    if (index > 0) ctx.emit({ kind: "step", packet: packet.id, attempt: input.attempt, step: "review", detail: `escalated to tier ${tier}: ${problem}` });
    const got = await reviewWith(ctx, input, { tier, prompt, firstRound: index * 2 });
    if (got.kind === "end") return got.end;
    if (got.kind === "unusable") {
      problem = got.problem;
      continue;
    }
    return recordReview(ctx, input, got.review, got.unresolved);
  }
  return { kind: "reviewer-unusable", reason: `the reviewer could not give evidence: ${problem}` };
}

/** The next tier up from the packet's reviewer, if there is one. */
function escalationTier(ctx: RunContext, reviewer: string): string[] {
  const at = ctx.config.tiers.findIndex((tier) => tier.name === reviewer);
  const next = at >= 0 ? ctx.config.tiers[at + 1] : undefined;
  return next ? [next.name] : [];
}

type ReviewCall = { kind: "end"; end: AttemptEnd } | { kind: "unusable"; problem: string } | { kind: "usable"; review: Review; unresolved: Map<string, string> };

/** One tier's review: its call and at most one correction round, for a broken contract or evidence that does not resolve. */
async function reviewWith(ctx: RunContext, input: ReviewInput, options: { tier: string; prompt: string; firstRound: number }): Promise<ReviewCall> {
  const { packet } = input;
  const before = await snapshot(input.worktree);
  const call = {
    role: "reviewer" as const,
    packet: packet.id,
    attempt: input.attempt,
    tier: options.tier,
    worktree: input.worktree,
    runDir: input.runDir,
    output: REVIEW_OUTPUT,
  };
  let result = await callAgent(ctx, { ...call, round: options.firstRound, fresh: true, prompt: options.prompt });
  const failed = (): ReviewCall | undefined => {
    if (result.outcome.status === "ok") return undefined;
    return { kind: "end", end: agentCallEnd("reviewer", result.outcome, { now: Date.now(), maxWaitMs: ctx.config.limits.rateLimitWaitMs }) };
  };
  const read = async (): Promise<{ errors: string[]; review?: Review; unresolved: Map<string, string> }> => {
    const check = validateReview(result.json, packet.id, packet.invariants);
    if (!check.ok) return { errors: check.errors, unresolved: new Map() };
    const unresolved = await unresolvedEvidence(input.worktree, input.commit, check.review);
    return { errors: [...unresolved].map(([id, why]) => `invariant "${id}": ${why}; cite an existing line`), review: check.review, unresolved };
  };
  const firstFailure = failed();
  if (firstFailure) return firstFailure;
  let got = await read();
  if (got.errors.length > 0) {
    const sessionId = result.outcome.sessionId;
    result = await callAgent(ctx, {
      ...call,
      round: options.firstRound + 1,
      prompt: correctionPrompt("review", REVIEW_OUTPUT, got.errors, reviewContract(packet, REVIEW_OUTPUT)),
      ...(sessionId ? { resumeSession: sessionId } : {}),
    });
    const again = failed();
    if (again) return again;
    got = await read();
  }
  const after = await snapshot(input.worktree);
  if (after !== before) {
    return { kind: "end", end: { kind: "reviewer-tampered", reason: `the reviewer changed the worktree (${describeChange(before, after)}); its verdict is discarded` } };
  }
  if (got.errors.length > 0 || !got.review) return { kind: "unusable", problem: `tier ${options.tier}: ${got.errors.join("; ")}` };
  return { kind: "usable", review: got.review, unresolved: got.unresolved };
}

/** Records a usable review and computes the factory's verdict on it. */
async function recordReview(ctx: RunContext, input: ReviewInput, review: Review, unresolved: Map<string, string>): Promise<AttemptEnd> {
  const { packet } = input;
  // Reviews run only on green gates: every invariant with a check passed it.
  const checked = new Set(packet.invariants.filter((invariant) => invariant.check).map((invariant) => invariant.id));
  const verdict = effectiveVerdict({ review, invariants: packet.invariants, gatesGreen: true, unresolvedEvidence: unresolved, checked });
  const counts = rulingCounts(review);
  await ctx.ledger.append([
    {
      kind: "review-recorded",
      packet: packet.id,
      attempt: input.attempt,
      verdict: review.verdict,
      effective: verdict.verdict,
      overrides: verdict.overrides,
      ...counts,
      rulings: review.invariants.map((ruling) => ({ id: ruling.id, status: ruling.status, ...(ruling.evidence ? { evidence: clip(ruling.evidence) } : {}) })),
      findings: review.findings.slice(0, MAX_RECORDED_FINDINGS).map((finding) => ({
        severity: finding.severity,
        claim: clip(finding.claim),
        ...(finding.file ? { where: `${finding.file}${finding.line ? `:${finding.line}` : ""}` } : {}),
      })),
    },
  ]);
  ctx.emit({
    kind: "step",
    packet: packet.id,
    attempt: input.attempt,
    step: "review",
    detail: `${review.verdict}${verdict.verdict !== review.verdict ? ` → overridden to ${verdict.verdict}` : ""} (held ${counts.held}, violated ${counts.violated}, unverifiable ${counts.unverifiable})`,
  });
  return { kind: "reviewed", verdict, feedback: reviewFeedback(review, unresolved), counts };
}

/** Evidence that does not point at an existing line of the reviewed tree, by invariant id. */
async function unresolvedEvidence(worktree: string, commit: string, review: Review): Promise<Map<string, string>> {
  const unresolved = new Map<string, string>();
  for (const ruling of review.invariants) {
    if (ruling.evidence === undefined) continue;
    const evidence = parseEvidence(ruling.evidence);
    if (!evidence) continue;
    const text = await readFileAt(worktree, commit, evidence.path);
    if (text === undefined) {
      unresolved.set(ruling.id, `evidence ${ruling.evidence} names a file that does not exist`);
      continue;
    }
    const lines = lineCount(text);
    if (evidence.line < 1 || evidence.line > lines) unresolved.set(ruling.id, `evidence ${ruling.evidence} cites a line that does not exist (${evidence.path} has ${lines} lines)`);
  }
  return unresolved;
}

function reviewFeedback(review: Review, unresolved: ReadonlyMap<string, string>): string[] {
  return [
    ...review.invariants.filter((ruling) => ruling.status !== "held").map((ruling) => `Invariant "${ruling.id}" was ruled ${ruling.status}${ruling.evidence ? ` (${ruling.evidence})` : ""}.`),
    ...[...unresolved.values()].map((problem) => `Reviewer ${problem}.`),
    ...review.findings.map(
      (finding) =>
        `Reviewer finding (${finding.severity})${finding.file ? ` at ${finding.file}${finding.line ? `:${finding.line}` : ""}` : ""}: ${finding.claim}${finding.fix ? ` — fix: ${finding.fix}` : ""}`,
    ),
  ];
}

/** HEAD plus every tracked change and untracked file, except the reviewer's own output. */
async function snapshot(worktree: string): Promise<string> {
  const state = await worktreeState(worktree, { task: true });
  const head = state.head;
  const entries = state.entries.filter((entry) => !matchesAny(entry.path, AGENT_OUTPUTS));
  const hashes: string[] = [];
  for (const entry of entries) {
    const hash = await gitRun(worktree, ["hash-object", "--no-filters", "--", entry.path]).catch(() => "gone");
    hashes.push(`${entry.path}\t${entry.code}\t${hash.trim()}`);
  }
  return [head, ...hashes].join("\n");
}

function describeChange(before: string, after: string): string {
  const was = new Set(before.split("\n"));
  const changed = after
    .split("\n")
    .filter((line) => !was.has(line) && line.includes("\t"))
    .map((line) => line.split("\t")[0]);
  return changed.slice(0, 3).join(", ") || "it moved HEAD or reverted a change";
}

/** A review's text is the reviewer's: bounded before it enters the ledger. */
const MAX_RECORDED_FINDINGS = 50;
const MAX_RECORDED_TEXT = 500;

function clip(text: string): string {
  return text.length <= MAX_RECORDED_TEXT ? text : `${text.slice(0, MAX_RECORDED_TEXT)}…`;
}
