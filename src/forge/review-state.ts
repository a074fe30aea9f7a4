import type { CheckRun, CommitStatus, PullRequest, Review, ReviewComment } from "./github.js";

/** What a packet's open pull request calls for now. */
export type PullVerdict =
  | { kind: "merged"; commit: string }
  | { kind: "closed" }
  /** Someone other than the factory pushed to the PR's branch: that head was never gated. */
  | { kind: "head-moved"; sha: string }
  /** The base moved since the head was gated on it: the work is brought up to the new base and gated again (no attempt spent). */
  | { kind: "behind"; base: string }
  /** A failed check, a requested change: one more attempt, told this. */
  | { kind: "feedback"; lines: string[] }
  /** Checks still running on the head (or the forge still computing mergeability): look again later. */
  | { kind: "wait"; why: string }
  /** Every check passed on the gated head and auto_merge is on: merge it, guarded by that head. */
  | { kind: "merge" }
  /** Every check passed; a person merges. */
  | { kind: "person"; why: string };

const FAILED = new Set(["failure", "timed_out", "cancelled", "action_required", "startup_failure", "stale"]);
/** The longest piece of a check's output carried into the next attempt's feedback. */
const MAX_OUTPUT = 2_000;

/**
 * Pure: a pull request's verdict from what the forge says about it and its
 * head. Checks and reviews count only on the head the factory gated and
 * pushed; a review on an earlier head was answered by the attempt that made
 * this one. The factory's own gates were the verdict before the PR opened: the
 * forge's checks are one more gate, never a replacement.
 */
export function judgePull(input: {
  pull: PullRequest;
  /** The head the factory pushed and recorded. */
  head: string;
  /** The base commit that head was gated on (its parent). */
  fork: string;
  checks: readonly CheckRun[];
  statuses: readonly CommitStatus[];
  reviews: readonly Review[];
  comments: readonly ReviewComment[];
  autoMerge: boolean;
}): PullVerdict {
  const { pull, head } = input;
  if (pull.merged) return { kind: "merged", commit: pull.merge_commit_sha ?? "" };
  if (pull.state === "closed") return { kind: "closed" };
  if (pull.head.sha !== head) return { kind: "head-moved", sha: pull.head.sha };
  const lines: string[] = [];
  for (const check of input.checks) {
    if (check.status !== "completed" || !FAILED.has(check.conclusion ?? "")) continue;
    const output = [check.output?.title, check.output?.summary, check.output?.text].filter((part): part is string => Boolean(part?.trim())).join("\n");
    lines.push(`The forge's check "${check.name}" ${check.conclusion} on PR #${pull.number}${output ? `:\n${clip(output)}` : ""}`);
  }
  for (const status of latestStatuses(input.statuses)) {
    if (status.state === "failure" || status.state === "error")
      lines.push(`The forge's status "${status.context}" is ${status.state} on PR #${pull.number}${status.description ? `: ${status.description}` : ""}`);
  }
  const requested = latestReviews(input.reviews.filter((review) => review.commit_id === head)).filter((review) => review.state === "CHANGES_REQUESTED");
  for (const review of requested) lines.push(`${review.user?.login ?? "A reviewer"} requested changes on PR #${pull.number}${review.body?.trim() ? `: ${clip(review.body.trim())}` : ""}`);
  if (requested.length > 0) {
    for (const comment of input.comments.filter((candidate) => candidate.commit_id === head)) {
      lines.push(`${comment.user?.login ?? "A reviewer"} on ${comment.path}${comment.line ? `:${comment.line}` : ""}: ${clip(comment.body)}`);
    }
  }
  if (lines.length > 0) return { kind: "feedback", lines };
  // The factory's promise is that what lands was gated on the tip it lands on: a moved base is gated again first.
  if (pull.base.sha !== input.fork) return { kind: "behind", base: pull.base.sha };
  const running = [
    ...input.checks.filter((check) => check.status !== "completed").map((check) => check.name),
    ...latestStatuses(input.statuses)
      .filter((status) => status.state === "pending")
      .map((status) => status.context),
  ];
  if (running.length > 0) return { kind: "wait", why: `checks still running on PR #${pull.number}: ${running.join(", ")}` };
  if (!input.autoMerge) return { kind: "person", why: `PR #${pull.number} passed its checks and waits for a person to merge it: ${pull.html_url}` };
  if (pull.mergeable === null) return { kind: "wait", why: `the forge is still working out whether PR #${pull.number} can merge` };
  return { kind: "merge" };
}

/** A status context reported several times counts by its newest report (GitHub lists newest first). */
function latestStatuses(statuses: readonly CommitStatus[]): CommitStatus[] {
  const seen = new Map<string, CommitStatus>();
  for (const status of statuses) if (!seen.has(status.context)) seen.set(status.context, status);
  return [...seen.values()];
}

/** Each reviewer's newest review that says something (a comment-only review does not undo a request for changes). */
function latestReviews(reviews: readonly Review[]): Review[] {
  const byUser = new Map<string, Review>();
  for (const review of reviews) {
    if (review.state === "COMMENTED" || review.state === "PENDING") continue;
    byUser.set(review.user?.login ?? "", review);
  }
  return [...byUser.values()];
}

function clip(text: string): string {
  return text.length > MAX_OUTPUT ? `${text.slice(0, MAX_OUTPUT)}…` : text;
}
