import type { CheckRun, CommitStatus, PullRequest, RequiredCheck, Review, ReviewComment } from "./github.js";

/**
 * Which checks must have passed on the gated head before an auto-merge:
 * listed (by the config, or by the branch's protection and rulesets); none
 * (the config says the repository has no CI: `required_checks = []`); or
 * unknown (nothing says), where "no check failed" proves nothing: the forge
 * registers a push's check suites only seconds after it.
 */
export type Requirement = { kind: "listed"; checks: readonly RequiredCheck[]; from: string } | { kind: "none" } | { kind: "unknown" };

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
/** The conclusions GitHub lets a required check pass with. */
const PASSED = new Set(["success", "neutral", "skipped"]);
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
  required: Requirement;
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
  const { required } = input;
  if (required.kind === "listed") {
    const missing = required.checks.filter((check) => !passedOn(check, input.checks, input.statuses));
    if (missing.length > 0) return { kind: "wait", why: `PR #${pull.number} waits for the required checks ${missing.map(describeCheck).join(", ")} (${required.from}) to pass on its head` };
  }
  if (!input.autoMerge) return { kind: "person", why: `PR #${pull.number} passed its checks and waits for a person to merge it: ${pull.html_url}` };
  if (required.kind === "unknown")
    return {
      kind: "person",
      why: `PR #${pull.number} is not merged by the factory: no required check is known, and a PR with no failing check has not passed one (the forge registers its checks after a push); name them in [forge] required_checks (or require them in ${pull.base.ref}'s branch protection or a ruleset), or write required_checks = [] for a repository without CI: ${pull.html_url}`,
    };
  if (pull.mergeable === null) return { kind: "wait", why: `the forge is still working out whether PR #${pull.number} can merge` };
  return { kind: "merge" };
}

/**
 * Pure: whether the forge reports a required check passed on the head: a
 * check run of that name, or a status of that context, from the app the
 * requirement pins (a status posted by anyone else counts for nothing; an app
 * known only by its id is recognised in a status by the slug its check runs
 * carry). A status counts by its poster's newest report.
 */
export function passedOn(required: RequiredCheck, checks: readonly CheckRun[], statuses: readonly CommitStatus[]): boolean {
  const pinned = required.appId !== undefined || required.app !== undefined;
  const byApp = (check: CheckRun) => (required.appId !== undefined ? check.app?.id === required.appId : required.app === undefined || check.app?.slug === required.app);
  if (checks.some((check) => check.name === required.context && byApp(check) && check.status === "completed" && PASSED.has(check.conclusion ?? ""))) return true;
  const slug = required.app ?? checks.find((check) => required.appId !== undefined && check.app?.id === required.appId)?.app?.slug;
  return latestStatuses(statuses).some((status) => status.context === required.context && status.state === "success" && (!pinned || (slug !== undefined && status.creator?.login === `${slug}[bot]`)));
}

function describeCheck(check: RequiredCheck): string {
  const app = check.app ?? (check.appId !== undefined ? `app ${check.appId}` : undefined);
  return app ? `"${check.context}" (from ${app})` : `"${check.context}"`;
}

/**
 * A status context reported several times counts by each poster's newest
 * report (GitHub lists newest first): a later "success" from someone else
 * does not hide the CI's failure.
 */
function latestStatuses(statuses: readonly CommitStatus[]): CommitStatus[] {
  const seen = new Map<string, CommitStatus>();
  for (const status of statuses) {
    const key = JSON.stringify([status.context, status.creator?.login ?? ""]);
    if (!seen.has(key)) seen.set(key, status);
  }
  return [...seen.values()];
}

/**
 * Pure: the reviews and review comments that may become the next prompt:
 * those of users who may write to the repository. Anyone else's are left out
 * and named (a stranger's "changes requested" on a public repository is not
 * the team's word).
 */
export function fromWriters(reviews: readonly Review[], comments: readonly ReviewComment[], writers: ReadonlySet<string>): { reviews: Review[]; comments: ReviewComment[]; ignored: string[] } {
  const may = (user: { login: string } | null) => user !== null && writers.has(user.login);
  const ignored = new Set<string>();
  for (const entry of [...reviews, ...comments]) if (!may(entry.user) && (("state" in entry && entry.state !== "COMMENTED") || "path" in entry)) ignored.add(entry.user?.login ?? "(a deleted user)");
  return {
    reviews: reviews.filter((review) => may(review.user)),
    comments: comments.filter((comment) => may(comment.user)),
    ignored: [...ignored].sort(),
  };
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
