import type { Invariant } from "../packet/types.js";
import type { Review, ReviewVerdict } from "./contract.js";

export interface EffectiveVerdict {
  verdict: ReviewVerdict;
  /** Why the factory's verdict differs from the reviewer's, one line each; empty when it agrees. */
  overrides: string[];
}

export interface VerdictInput {
  review: Review;
  invariants: readonly Invariant[];
  gatesGreen: boolean;
  /** Evidence that does not resolve to a line in the worktree, by invariant id. */
  unresolvedEvidence: ReadonlyMap<string, string>;
  /** Invariants the factory ruled itself by running their checks (all passed, or the gates were not green): held. */
  checked?: ReadonlySet<string>;
}

/**
 * Pure, in DESIGN §8's order: reviewer reject → reject; gates not green →
 * revise; a critical invariant violated or unverifiable (evidence that does
 * not resolve counts as unverifiable) → revise; a blocker finding → revise;
 * otherwise the reviewer's verdict.
 */
export function effectiveVerdict(input: VerdictInput): EffectiveVerdict {
  const { review } = input;
  if (review.verdict === "reject") return { verdict: "reject", overrides: [] };
  const reasons: string[] = [];
  // The factory's own ruling of a checked invariant stands over the reviewer's; a ruling against it is recorded.
  const rulingOverrides = review.invariants
    .filter((ruling) => input.checked?.has(ruling.id) && ruling.status !== "held")
    .map((ruling) => `reviewer ruled invariant "${ruling.id}" ${ruling.status}, but its check passed: held`);
  if (!input.gatesGreen) reasons.push("the gates are not green");
  for (const ruling of review.invariants) {
    const invariant = input.invariants.find((candidate) => candidate.id === ruling.id);
    if (!invariant?.critical || input.checked?.has(ruling.id)) continue;
    if (ruling.status !== "held") reasons.push(`critical invariant "${ruling.id}" is ${ruling.status}`);
    else if (input.unresolvedEvidence.has(ruling.id)) {
      reasons.push(`critical invariant "${ruling.id}" is unverifiable: ${input.unresolvedEvidence.get(ruling.id)}`);
    }
  }
  for (const finding of review.findings) {
    if (finding.severity === "blocker") reasons.push(`blocker finding: ${finding.claim}`);
  }
  if (reasons.length === 0) return { verdict: review.verdict, overrides: rulingOverrides };
  if (review.verdict === "revise") return { verdict: "revise", overrides: rulingOverrides };
  return { verdict: "revise", overrides: [...rulingOverrides, ...reasons.map((reason) => `reviewer said ${review.verdict}, but ${reason}`)] };
}

/** Counts for the merge commit's trailers and the ledger. */
export function rulingCounts(review: Review): { held: number; violated: number; unverifiable: number } {
  const counts = { held: 0, violated: 0, unverifiable: 0 };
  for (const ruling of review.invariants) counts[ruling.status]++;
  return counts;
}
