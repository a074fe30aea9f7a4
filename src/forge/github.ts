import type { ForgeConfig, RequiredCheck } from "../config/types.js";

export type { RequiredCheck };

import { sleepUntil } from "../util/sleep.js";

/** The parts of GitHub's REST answers the factory reads (the real shapes carry much more). */
export interface PullRequest {
  number: number;
  html_url: string;
  state: "open" | "closed";
  merged: boolean;
  merge_commit_sha: string | null;
  mergeable: boolean | null;
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
}

export interface Issue {
  number: number;
  title: string;
  body: string | null;
  html_url: string;
  state: string;
  user: { login: string } | null;
  labels: ({ name: string } | string)[];
  created_at: string;
  pull_request?: unknown;
}

export interface IssueComment {
  body: string | null;
  user: { login: string } | null;
  created_at: string;
  html_url: string;
}

export interface CheckRun {
  name: string;
  status: "queued" | "in_progress" | "completed" | string;
  conclusion: string | null;
  html_url?: string | null;
  output?: { title?: string | null; summary?: string | null; text?: string | null };
  /** The GitHub App that reported it. */
  app?: { id: number; slug?: string } | null;
}

export interface CommitStatus {
  context: string;
  state: "error" | "failure" | "pending" | "success";
  description: string | null;
  target_url?: string | null;
  /** Who posted it (an app posts as "<slug>[bot]"). */
  creator?: { login: string } | null;
}

export interface Review {
  user: { login: string } | null;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING" | string;
  body: string | null;
  commit_id: string | null;
}

export interface ReviewComment {
  user: { login: string } | null;
  path: string;
  line?: number | null;
  body: string;
  commit_id: string;
}

export type MergeAnswer =
  | { kind: "merged"; sha: string }
  | { kind: "not-mergeable"; message: string }
  | { kind: "head-moved"; message: string }
  /** The forge accepted the merge and runs it in the background (or put the PR in its merge queue): look again later. */
  | { kind: "merging"; message: string };

/** GitHub's answer about an asynchronous merge (`PUT /pulls/N/merge-async`, `GET …/merge-async/UUID`). */
export interface AsyncMerge {
  status: "pending" | "merged" | "enqueued" | "failed";
  details?: { message?: string; uuid?: string; sha?: string; expected_head_sha?: string };
}

/** What GitHub's branch protection and rulesets enforce on a branch: up to date before merging (strict), and which checks. */
export type Protection = { kind: "none" } | { kind: "protected"; strict: boolean; contexts: string[]; checks: RequiredCheck[]; from: string[] };

/** A user's permission on the repository (GitHub's legacy names: admin, write, read, none). */
export type Permission = "admin" | "write" | "read" | "none";

/** The forge could not be reached or answered with an error: an environment fault, never the work's. */
export class ForgeError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

const MAX_TRIES = 4;
const NEVER = new AbortController().signal;
/** The longest one wait for a 5xx or a rate limit (its `retry-after` or `x-ratelimit-reset`) may take. */
const MAX_WAIT_MS = 60_000;
/** An accepted asynchronous merge is read back this many times (after 250, 500 and 1000 ms) before the watch moves on. */
const ASYNC_READS = 3;
const ASYNC_READ_MS = 250;

/**
 * GitHub's REST API through Node's fetch (no SDK: a handful of endpoints, and the
 * retry rules are the factory's own). 5xx answers and rate limits are waited out,
 * honouring `retry-after` and `x-ratelimit-reset`, bounded; then a ForgeError.
 */
export class GitHub {
  private readonly base: string;

  constructor(
    private readonly config: Pick<ForgeConfig, "api" | "repo" | "tokenEnv">,
    private readonly token: string | undefined,
    private readonly signal?: AbortSignal,
  ) {
    this.base = `${config.api}/repos/${config.repo}`;
  }

  /** "owner/name". */
  get repo(): string {
    return this.config.repo;
  }

  /** The open pull request from `head` (a branch of the same repository) into `base`, if there is one. */
  async openPullFrom(head: string, base: string): Promise<PullRequest | undefined> {
    const owner = this.config.repo.split("/")[0];
    const pulls = (await this.request("GET", `/pulls?state=open&head=${encodeURIComponent(`${owner}:${head}`)}&base=${encodeURIComponent(base)}`)) as PullRequest[];
    return pulls[0];
  }

  async createPull(input: { head: string; base: string; title: string; body: string }): Promise<PullRequest> {
    return (await this.request("POST", "/pulls", input)) as PullRequest;
  }

  async updatePull(number: number, input: { title?: string; body?: string }): Promise<PullRequest> {
    return (await this.request("PATCH", `/pulls/${number}`, input)) as PullRequest;
  }

  /** An issue (GitHub answers pull requests here too: `pull_request` is set on those). */
  async issue(number: number): Promise<Issue> {
    return (await this.request("GET", `/issues/${number}`)) as Issue;
  }

  /** An issue's comments, oldest first (the first 100). */
  async issueComments(number: number): Promise<IssueComment[]> {
    return (await this.request("GET", `/issues/${number}/comments?per_page=100`)) as IssueComment[];
  }

  async commentOnIssue(number: number, body: string): Promise<void> {
    await this.request("POST", `/issues/${number}/comments`, { body });
  }

  async closeIssue(number: number): Promise<void> {
    await this.request("PATCH", `/issues/${number}`, { state: "closed", state_reason: "completed" });
  }

  async pull(number: number): Promise<PullRequest> {
    return (await this.request("GET", `/pulls/${number}`)) as PullRequest;
  }

  async checkRuns(sha: string): Promise<CheckRun[]> {
    return ((await this.request("GET", `/commits/${sha}/check-runs?per_page=100`)) as { check_runs: CheckRun[] }).check_runs;
  }

  /** Every status posted on a commit, newest first, with who posted it (the combined status names no creator). */
  async statuses(sha: string): Promise<CommitStatus[]> {
    return (await this.request("GET", `/commits/${sha}/statuses?per_page=100`)) as CommitStatus[];
  }

  /** A user's permission on the repository; someone who is not a collaborator (404) has none. */
  async permission(login: string): Promise<Permission> {
    const answer = await this.send("GET", `/collaborators/${encodeURIComponent(login)}/permission`, undefined, [404]);
    if (answer.status === 404) return "none";
    const permission = (answer.body as { permission?: string }).permission;
    return permission === "admin" || permission === "write" || permission === "read" ? permission : "none";
  }

  async reviews(number: number): Promise<Review[]> {
    return (await this.request("GET", `/pulls/${number}/reviews?per_page=100`)) as Review[];
  }

  async reviewComments(number: number): Promise<ReviewComment[]> {
    return (await this.request("GET", `/pulls/${number}/comments?per_page=100`)) as ReviewComment[];
  }

  /**
   * Squash-merges, guarded by the head the factory gated. GitHub's asynchronous
   * merge is asked first (it retries what it can and cannot time out on a large
   * merge; with a merge queue required it enqueues the PR); its result is read
   * back a few times, and one still running is `merging`. A forge without the
   * endpoint (404), an expired result, or an asynchronous merge that failed
   * fall back to the synchronous merge, whose 405 (not mergeable yet) and 409
   * (the head moved) are answers, not errors.
   */
  async merge(number: number, input: { sha: string; title: string; message: string }): Promise<MergeAnswer> {
    const asked = await this.send("PUT", `/pulls/${number}/merge-async`, { ...mergeBody(input), merge_action: "default" }, [400, 404, 409]);
    if (asked.status === 404) return this.mergeNow(number, input);
    let result = (asked.body ?? { status: "failed" }) as AsyncMerge;
    if (asked.status === 400) return { kind: "not-mergeable", message: result.details?.message ?? "not ready to be merged" };
    for (let read = 1; result.status === "pending" && result.details?.uuid && read <= ASYNC_READS; read++) {
      await sleepUntil(Date.now() + ASYNC_READ_MS * 2 ** (read - 1), this.signal ?? NEVER);
      const again = await this.send("GET", `/pulls/${number}/merge-async/${encodeURIComponent(result.details.uuid)}`, undefined, [404]);
      if (again.status === 404) return this.mergeNow(number, input);
      result = (again.body ?? { status: "failed" }) as AsyncMerge;
    }
    return asyncAnswer(number, input.sha, result) ?? this.mergeNow(number, input);
  }

  private async mergeNow(number: number, input: { sha: string; title: string; message: string }): Promise<MergeAnswer> {
    const answer = await this.send("PUT", `/pulls/${number}/merge`, mergeBody(input), [405, 409]);
    const body = answer.body as { sha?: string; message?: string };
    if (answer.status === 405) return { kind: "not-mergeable", message: body.message ?? "not mergeable" };
    if (answer.status === 409) return { kind: "head-moved", message: body.message ?? "head branch was modified" };
    return { kind: "merged", sha: body.sha ?? "" };
  }

  /**
   * What the branch's classic protection and the repository's rulesets for it
   * require (a 404 is no protection, or a forge without rulesets), together.
   */
  async protection(branch: string): Promise<Protection> {
    const classic = await this.send("GET", `/branches/${encodeURIComponent(branch)}/protection`, undefined, [404]);
    const rules = await this.send("GET", `/rules/branches/${encodeURIComponent(branch)}`, undefined, [404]);
    return protectionOf(classic.status === 404 ? undefined : classic.body, rules.status === 404 ? undefined : rules.body);
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    return (await this.send(method, path, body, [])).body;
  }

  private async send(method: string, path: string, body: unknown, answers: readonly number[]): Promise<{ status: number; body: unknown }> {
    const where = `${method} ${this.config.api}/repos/${this.config.repo}${path.split("?")[0]}`;
    if (!this.token) throw new ForgeError(`no token: set ${this.config.tokenEnv} to a token that may open and merge pull requests on ${this.config.repo}`);
    for (let tries = 1; ; tries++) {
      let response: Response;
      try {
        response = await fetch(`${this.base}${path}`, {
          method,
          headers: {
            accept: "application/vnd.github+json",
            authorization: `Bearer ${this.token}`,
            "x-github-api-version": "2022-11-28",
            "user-agent": "factory",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          ...(this.signal ? { signal: this.signal } : {}),
        });
      } catch (error) {
        if (this.signal?.aborted) throw error;
        if (tries >= MAX_TRIES) throw new ForgeError(`${where}: the forge could not be reached (${causeOf(error)})`);
        await sleepUntil(Date.now() + backoff(tries), this.signal ?? NEVER);
        continue;
      }
      const text = await response.text();
      const parsed = parseJson(text);
      if (response.ok || answers.includes(response.status)) return { status: response.status, body: parsed };
      const wait = waitFor(response, Date.now());
      if (wait !== undefined && tries < MAX_TRIES) {
        await sleepUntil(Date.now() + Math.min(wait, MAX_WAIT_MS), this.signal ?? NEVER);
        continue;
      }
      const message = (parsed as { message?: string } | undefined)?.message ?? text.slice(0, 200);
      throw new ForgeError(`${where}: ${response.status} ${message}`, response.status);
    }
  }
}

function mergeBody(input: { sha: string; title: string; message: string }) {
  return { merge_method: "squash", sha: input.sha, commit_title: input.title, commit_message: input.message };
}

/**
 * Pure: what an asynchronous merge's result means, or undefined when it
 * failed (the synchronous merge then says why, or merges what a passing
 * failure let through).
 */
export function asyncAnswer(number: number, sha: string, result: AsyncMerge): MergeAnswer | undefined {
  const details = result.details ?? {};
  switch (result.status) {
    case "merged":
      return { kind: "merged", sha: details.sha ?? "" };
    case "enqueued":
      return { kind: "merging", message: `PR #${number} is in the forge's merge queue${details.message ? ` (${details.message})` : ""}` };
    case "pending": {
      const guard = details.expected_head_sha && details.expected_head_sha !== sha ? `, guarded by an earlier head ${details.expected_head_sha.slice(0, 10)}` : "";
      return { kind: "merging", message: `the forge is merging PR #${number} in the background (request ${details.uuid ?? "?"}${guard})` };
    }
    default:
      return undefined;
  }
}

type ClassicChecks = { strict?: boolean; contexts?: string[]; checks?: { context: string; app_id?: number | null }[] } | null;
type Rule = { type?: string; parameters?: { strict_required_status_checks_policy?: boolean; required_status_checks?: { context: string; integration_id?: number | null }[] } };

/** Pure: branch protection (GitHub's answer, or undefined: none) and the branch's rules (the array, or undefined) as one requirement. */
export function protectionOf(classic: unknown, rules: unknown): Protection {
  const from: string[] = [];
  const checks: RequiredCheck[] = [];
  let strict = false;
  const add = (context: string, appId: number | null | undefined) => {
    if (!checks.some((check) => check.context === context && check.appId === (appId ?? undefined))) checks.push({ context, ...(typeof appId === "number" ? { appId } : {}) });
  };
  if (classic !== undefined) {
    from.push("branch protection");
    const required = (classic as { required_status_checks?: ClassicChecks }).required_status_checks;
    strict ||= required?.strict === true;
    if (required?.checks?.length) for (const check of required.checks) add(check.context, check.app_id);
    else for (const context of required?.contexts ?? []) add(context, undefined);
  }
  const statusRules = (Array.isArray(rules) ? (rules as Rule[]) : []).filter((rule) => rule.type === "required_status_checks");
  if (statusRules.length > 0) from.push("rulesets");
  for (const rule of statusRules) {
    strict ||= rule.parameters?.strict_required_status_checks_policy === true;
    for (const check of rule.parameters?.required_status_checks ?? []) add(check.context, check.integration_id);
  }
  if (from.length === 0) return { kind: "none" };
  return { kind: "protected", strict, contexts: [...new Set(checks.map((check) => check.context))], checks, from };
}

/** Pure: how long to wait before trying again (ms), or undefined for an answer that will not change by waiting. */
export function waitFor(response: Pick<Response, "status" | "headers">, now: number): number | undefined {
  const retryAfter = response.headers.get("retry-after");
  const limited = response.status === 429 || (response.status === 403 && response.headers.get("x-ratelimit-remaining") === "0");
  if (!limited && response.status < 500) return undefined;
  if (retryAfter !== null && /^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const reset = response.headers.get("x-ratelimit-reset");
  if (limited && reset !== null && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now);
  return limited ? 60_000 : 1000;
}

function backoff(tries: number): number {
  return 500 * 2 ** (tries - 1);
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause ?? (error instanceof Error ? error.message : String(error));
}

/** The forge client of a config, its token from the environment variable the config names. */
export function forgeOf(config: ForgeConfig, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): GitHub {
  return new GitHub(config, env[config.tokenEnv], signal);
}
