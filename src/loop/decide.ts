import type { AgentOutcome } from "../agents/types.js";
import type { GateReport } from "../gates/types.js";
import type { Decision } from "../ledger/events.js";
import type { GateMode } from "../packet/types.js";
import { formatDuration } from "../util/duration.js";
import { unreachable } from "../util/unreachable.js";
import type { AttemptEnd } from "./attempt-end.js";
import { fingerprintOf } from "./fingerprint.js";

export type { AttemptEnd } from "./attempt-end.js";

export interface DecisionInput {
  end: AttemptEnd;
  /** Attempts spent so far, this one included. */
  attemptsUsed: number;
  maxAttempts: number;
  gate: GateMode;
  /**
   * The fingerprints of this version's earlier failed attempts, oldest first: a failure seen before blocks,
   * whether in a row or after another (19 failing tests, then 20, then the same 19 again).
   */
  earlierFingerprints?: readonly string[] | undefined;
}

export interface AttemptDecision {
  decision: Decision;
  reasons: string[];
  /** The attempt does not count: the environment failed, not the work. */
  refund: boolean;
  /** An environment error: two in a row halt the run. */
  environment: boolean;
  /** What the next attempt's prompt is told. */
  feedback: string[];
  /** How the work failed, when it did (see fingerprint.ts). */
  fingerprint?: string;
  /** A block that is the packet file's fault (defective, or cut from a spec that moved): only an edit of the packet helps. */
  packetFault?: true;
}

/**
 * Pure: how an attempt ends when an agent call did not succeed. A rate limit
 * is the provider's; an agent killed by a signal from outside (the kernel
 * out of memory, a person) is the machine's, not the work's: an environment
 * error, not counted (two in a row halt the run). Anything else is the agent's.
 */
export function agentCallEnd(
  role: "implementer" | "reviewer",
  outcome: Pick<AgentOutcome, "status" | "detail" | "resetsAt" | "neverStarted">,
  limits: { now: number; maxWaitMs: number } = { now: Date.now(), maxWaitMs: Number.POSITIVE_INFINITY },
): AttemptEnd {
  const what = `the ${role} ${outcome.status}${outcome.detail ? `: ${outcome.detail}` : ""}`;
  const reset = outcome.resetsAt === undefined ? Number.NaN : Date.parse(outcome.resetsAt);
  if (outcome.status === "rate-limited" && reset - limits.now > limits.maxWaitMs) {
    // Nobody waits that long in one night, and an agent can say anything: a failed call, never a reason to stop everyone.
    return {
      kind: "agent-failed",
      reason: `the ${role} reports a rate limit until ${outcome.resetsAt}, further away than rate_limit_wait (${formatDuration(limits.maxWaitMs)}): a failed call`,
      rateLimited: { role, resetsAt: outcome.resetsAt as string },
    };
  }
  if (outcome.status === "rate-limited") {
    // Waited out alike, said as it was: a limit, or the provider's own failure (a 500 is no rate limit).
    const until = outcome.resetsAt ? ` until ${outcome.resetsAt}` : "";
    const reason = outcome.detail ? `the ${role} waits on its provider${until}: ${outcome.detail}` : `the ${role} was rate-limited${until}`;
    return { kind: "rate-limited", role, reason, ...(outcome.resetsAt ? { resetsAt: outcome.resetsAt } : {}) };
  }
  if (outcome.neverStarted) {
    return {
      kind: "environment-error",
      reason: `the ${role}'s program could not start inside the sandbox (${outcome.detail ?? "exit 127"}); install it where the sandbox sees it (on PATH, or by path); not counted`,
    };
  }
  if (outcome.status === "crashed" && /^killed by SIG/.test(outcome.detail ?? "")) {
    return { kind: "environment-error", reason: `the ${role} was ${outcome.detail} from outside the factory (out of memory, or a person); not counted` };
  }
  return { kind: "agent-failed", reason: what };
}

/** The factory's own guards: work that failed one of them is never carried into a retry. */
const GUARDS = new Set(["untouched", "scope", "tamper", "changed"]);

/**
 * Pure: whether a retry may continue this attempt's work (`retry_from =
 * "last"`): it was gated, every guard passed, and it failed on its merits
 * (tests, lint, the review), so the next attempt fixes it rather than redo it.
 */
export function continuable(end: AttemptEnd, gates: readonly GateReport[] | undefined): boolean {
  if (!gates || (end.kind !== "gates-red" && end.kind !== "reviewed")) return false;
  return gates.every((report) => !GUARDS.has(report.name) || report.status === "pass");
}

/** Pure: what follows an attempt (DESIGN §6–§8). */
export function decide(input: DecisionInput): AttemptDecision {
  const decision = decideEnd(input);
  const fingerprint = fingerprintOf(input.end);
  if (fingerprint === undefined || decision.refund || (decision.decision !== "retry" && decision.decision !== "block")) return decision;
  if (decision.decision === "retry" && input.earlierFingerprints?.includes(fingerprint)) {
    // Paying again for the same failure teaches nothing: stop here.
    return { ...decision, decision: "block", reasons: [`the same failure twice: ${fingerprint} (${decision.reasons.join("; ")})`], fingerprint };
  }
  return { ...decision, fingerprint };
}

function decideEnd(input: DecisionInput): AttemptDecision {
  const { end } = input;
  const block = (reason: string): AttemptDecision => ({ decision: "block", reasons: [reason], refund: false, environment: false, feedback: [] });
  const retry = (reasons: string[], feedback: string[] = reasons): AttemptDecision => {
    if (input.attemptsUsed >= input.maxAttempts) {
      return { ...block(`out of attempts (${input.attemptsUsed}/${input.maxAttempts}): ${reasons.join("; ")}`), feedback };
    }
    return { decision: "retry", reasons, refund: false, environment: false, feedback };
  };
  switch (end.kind) {
    case "spec-drift":
    case "defective-packet":
      return { ...block(end.reason), packetFault: true };
    case "reached-outside":
      return block(end.reason);
    case "implementer-blocked":
      return block(`the implementer says it is blocked: ${end.reason}`);
    case "implementer-question":
      // Reached only past [limits] max_questions: the question is the attempt's failure, and its feedback.
      return retry(
        [`the implementer asked another question, past max_questions: ${end.question}`],
        [`You asked: ${end.question}\nNo more questions can be asked for this packet: decide from the packet, the spec and the answers you were given, and say what you assumed in your summary.`],
      );
    case "reviewer-unusable":
      // The work passed every gate and was never judged: its attempt is not spent.
      return { ...block(end.reason), refund: true };
    case "environment-error":
      return { decision: "retry", reasons: [end.reason], refund: true, environment: true, feedback: [] };
    case "rate-limited":
      return { decision: "retry", reasons: [end.reason], refund: true, environment: false, feedback: [] };
    case "agent-failed":
    case "implementer-failed":
    case "reviewer-tampered":
    case "merge-conflict":
      return retry([end.reason]);
    case "result-contract":
      return retry([`the result file is invalid: ${end.errors.join("; ")}`]);
    case "gates-red": {
      const failed = end.reports.filter((report) => report.status === "fail");
      if (failed.length === 0) {
        const errors = end.reports.filter((report) => report.status === "error");
        return { decision: "retry", reasons: errors.map((r) => `gate ${r.name} could not run: ${r.summary}`), refund: true, environment: true, feedback: [] };
      }
      const reasons = failed.map((report) => `gate ${report.name} failed: ${report.summary}`);
      const feedback = failed.map((report) =>
        [
          `Gate "${report.name}" failed: ${report.summary}`,
          // builtinReport's summary already is the first finding; list them only when there are more.
          ...(report.findings.length > 1 || !report.summary.startsWith(report.findings[0]?.file ?? "\u0000")
            ? report.findings.map((f) => `  ${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`)
            : []),
          ...(report.tail ? ["  Output (tail):", ...report.tail.split("\n").map((line) => `    ${line}`)] : []),
        ].join("\n"),
      );
      return retry(reasons, feedback);
    }
    case "reviewed": {
      const { verdict, overrides } = end.verdict;
      if (verdict === "reject") return block(`the reviewer rejected the work${end.feedback.length ? `: ${end.feedback[0]}` : ""}`);
      if (verdict === "revise") return retry([...(overrides.length ? overrides : ["the reviewer asked for a revision"])], [...overrides, ...end.feedback]);
      return { decision: input.gate === "human" ? "hold" : "merge", reasons: [], refund: false, environment: false, feedback: [] };
    }
    default:
      return unreachable(end);
  }
}
