import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A check run as the stub reports it for a head (GitHub's shape, the fields the factory reads and a few more). */
export interface StubCheck {
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | "neutral" | "cancelled" | "timed_out" | "action_required" | "skipped" | null;
  output?: { title: string | null; summary: string | null; text: string | null };
  /** The app that reports it (default: GitHub Actions). */
  app?: { id: number; slug: string };
}

/** A commit status as the stub reports it (GitHub's shape): who posted it, newest first in the list. */
export interface StubStatus {
  context: string;
  state: "error" | "failure" | "pending" | "success";
  description: string | null;
  creator: string;
}

/** GitHub Actions as an app: its id and slug (a status it posts is by "github-actions[bot]"). */
export const ACTIONS_APP = { id: 15368, slug: "github-actions" };

export interface StubPull {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  merged: boolean;
  merge_commit_sha: string | null;
  head: string;
  base: string;
  /** The head sha as the PR was first opened and as each push moved it. */
  heads: string[];
  reviews: { user: { login: string }; state: string; body: string; commit_id: string }[];
  comments: { user: { login: string }; path: string; line: number; body: string; commit_id: string }[];
}

/** An issue as the stub keeps it (GitHub's fields the factory reads). */
export interface StubIssue {
  number: number;
  title: string;
  body: string | null;
  user: { login: string };
  labels: string[];
  state: "open" | "closed";
  created_at: string;
  comments: { user: { login: string }; body: string; created_at: string }[];
  /** A pull request's number answered on /issues, as GitHub does. */
  pull?: true;
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
  authorization: string | undefined;
  /** When it arrived (Date.now()). */
  at: number;
  /** What the stub answered. */
  response?: { status: number; body: unknown };
}

export interface GitHubStub {
  /** The API base for `[forge] api`. */
  api: string;
  /** The certificate to trust (NODE_EXTRA_CA_CERTS) for HTTPS on 127.0.0.1. */
  caFile: string;
  requests: RecordedRequest[];
  pulls: Map<number, StubPull>;
  issues: Map<number, StubIssue>;
  /** The checks the forge reports on a head: the n-th head it saw for the PR (0 first). Default: one passing check. */
  checks: (sha: string, nthHead: number) => StubCheck[];
  /**
   * How many reads of a head's check runs find none before its check suite is registered: GitHub registers a
   * push's suites seconds after it, so the first look finds nothing. Default 1.
   */
  registerAfter: number;
  /** The commit statuses on a head, newest first. Default: none. */
  statuses: (sha: string, nthHead: number) => StubStatus[];
  /** Reviews the forge shows on each head the PR had, besides `pulls.get(n).reviews`. Default: none. */
  reviewsOn: (sha: string, nthHead: number) => { user: { login: string }; state: string; body: string }[];
  /** The users who may write to the repository (GitHub's collaborator permission "write"); anyone else reads. */
  writers: Set<string>;
  /** Faults the next requests (any) answer with before being served: a 5xx, or a rate limit with its headers. */
  faults: { status: number; headers?: Record<string, string> }[];
  /** Status codes the next synchronous merge calls answer before any real merge (405, 409). */
  mergeAnswers: number[];
  /** Whether `PUT /pulls/N/merge-async` exists (api.github.com has it; a forge without it answers 404). Default true. */
  asyncMerge: boolean;
  /** How many reads of an accepted asynchronous merge answer `pending` before it runs. Default 0. */
  asyncPending: number;
  /** Messages the next asynchronous merges fail with when they run (GitHub's `failed` result). */
  asyncFailures: string[];
  /** The branch protection of a branch, as GitHub answers it; undefined: 404, not protected. */
  protection: Record<string, unknown> | undefined;
  /** The rules that apply to a branch, as GitHub answers `GET /rules/branches/B` (rulesets' rules). Default: none. */
  rules: Record<string, unknown>[];
  /** A person merges the PR on the forge (a squash, as GitHub's button does). */
  personMerges(number: number): string;
  close(number: number): void;
  stop(): Promise<void>;
}

const REPO = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/;

/**
 * A scripted GitHub-compatible REST server over HTTPS on 127.0.0.1, with a
 * certificate made at test time: the endpoints the factory uses, answering
 * with GitHub's response shapes, its pull requests backed by a real bare
 * repository (a PR's head follows its branch there; a merge is a squash
 * commit on the base). Every request is recorded.
 */
export async function startGitHubStub(input: {
  bare: string;
  owner: string;
  repo: string;
  token: string /** Plain HTTP, for a client in this very process (which cannot be told to trust a certificate made now). */;
  http?: boolean;
}): Promise<GitHubStub> {
  const dir = mkdtempSync(join(tmpdir(), "factory-github-stub-"));
  const keyFile = join(dir, "key.pem");
  const caFile = join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", caFile, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], {
    stdio: "ignore",
  });
  const git = (...args: string[]): string => execFileSync("git", args, { cwd: input.bare, encoding: "utf8" }).trim();
  const tipOf = (branch: string): string | undefined => {
    try {
      return git("rev-parse", "--verify", "--quiet", `refs/heads/${branch}`);
    } catch {
      return undefined;
    }
  };
  const site = `https://github.example/${input.owner}/${input.repo}`;
  let next = 1;
  /** How often each head's check runs were read (the suite registers after `registerAfter` reads). */
  const checkReads = new Map<string, number>();
  /** Asynchronous merge requests by uuid: what was asked, how often it was read, and its result once it ran. */
  const asyncRequests = new Map<string, { pull: number; sha: string; title: string; message: string; reads: number; result?: unknown }>();
  const stub: GitHubStub = {
    api: "",
    caFile,
    requests: [],
    pulls: new Map(),
    issues: new Map(),
    checks: () => [{ name: "ci", status: "completed", conclusion: "success", output: { title: "ok", summary: "all green", text: null } }],
    registerAfter: 1,
    statuses: () => [],
    reviewsOn: () => [],
    writers: new Set(),
    rules: [],
    mergeAnswers: [],
    asyncMerge: true,
    asyncPending: 0,
    asyncFailures: [],
    faults: [],
    protection: undefined,
    personMerges: (number) => squash(number, "Merged by a person"),
    close(number) {
      const pull = stub.pulls.get(number);
      if (pull) pull.state = "closed";
    },
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };

  /** Follows the PR's branch on the bare remote, as GitHub does when someone pushes to it. */
  const refresh = (pull: StubPull): void => {
    const tip = tipOf(pull.head);
    if (pull.state === "open" && tip && tip !== pull.heads.at(-1)) pull.heads.push(tip);
  };
  const shape = (pull: StubPull) => ({
    url: `${stub.api}/repos/${input.owner}/${input.repo}/pulls/${pull.number}`,
    id: 1000 + pull.number,
    number: pull.number,
    html_url: `${site}/pull/${pull.number}`,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    merged: pull.merged,
    merge_commit_sha: pull.merge_commit_sha,
    mergeable: pull.state === "open" ? true : null,
    mergeable_state: pull.state === "open" ? "clean" : "unknown",
    draft: false,
    user: { login: "factory-bot", id: 1, type: "User" },
    head: { label: `${input.owner}:${pull.head}`, ref: pull.head, sha: pull.heads.at(-1) ?? "", repo: { full_name: `${input.owner}/${input.repo}` } },
    base: { label: `${input.owner}:${pull.base}`, ref: pull.base, sha: tipOf(pull.base) ?? "", repo: { full_name: `${input.owner}/${input.repo}` } },
  });
  function squash(number: number, title: string, message = ""): string {
    const pull = stub.pulls.get(number);
    if (!pull) throw new Error(`no PR #${number}`);
    const head = pull.heads.at(-1) as string;
    const base = tipOf(pull.base) as string;
    const tree = git("merge-tree", "--write-tree", base, head).split("\n")[0] as string;
    const commit = git("commit-tree", tree, "-p", base, "-m", message ? `${title}\n\n${message}` : title);
    git("update-ref", `refs/heads/${pull.base}`, commit, base);
    Object.assign(pull, { merged: true, state: "closed", merge_commit_sha: commit });
    return commit;
  }
  /** Sends the answer; `true`, so a handler can `return answer(…)`. */
  const answer = (response: ServerResponse, status: number, body: unknown): true => {
    response.writeHead(status, { "content-type": "application/json; charset=utf-8", "x-github-api-version-selected": "2022-11-28" });
    response.end(JSON.stringify(body));
    const request = stub.requests.at(-1);
    if (request) request.response = { status, body };
    return true;
  };

  const handle = (request: IncomingMessage, response: ServerResponse, raw: string): true => {
    const url = new URL(request.url ?? "/", "https://127.0.0.1");
    const body = raw ? JSON.parse(raw) : undefined;
    stub.requests.push({ method: request.method ?? "", path: `${url.pathname}${url.search}`, body, authorization: request.headers.authorization, at: Date.now() });
    const fault = stub.faults.shift();
    if (fault) {
      response.writeHead(fault.status, { "content-type": "application/json; charset=utf-8", ...fault.headers });
      response.end(JSON.stringify({ message: fault.status === 403 || fault.status === 429 ? "API rate limit exceeded" : "Server Error" }));
      return true;
    }
    if (request.headers.authorization !== `Bearer ${input.token}`) return answer(response, 401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
    const matched = REPO.exec(url.pathname);
    if (!matched || matched[1] !== input.owner || matched[2] !== input.repo) return answer(response, 404, { message: "Not Found" });
    const rest = matched[3] ?? "";
    const method = request.method;
    if (method === "GET" && rest === "/pulls") {
      const head = url.searchParams.get("head");
      const state = url.searchParams.get("state") ?? "open";
      for (const pull of stub.pulls.values()) refresh(pull);
      const list = [...stub.pulls.values()].filter((pull) => (state === "all" || pull.state === state) && (!head || `${input.owner}:${pull.head}` === head));
      // A list answers in GitHub's pull-request-simple shape: no merged or mergeable fields (those come with one PR).
      return answer(
        response,
        200,
        list.map((pull) => {
          const { merged: _merged, mergeable: _mergeable, mergeable_state: _state, ...simple } = shape(pull);
          return simple;
        }),
      );
    }
    if (method === "POST" && rest === "/pulls") {
      const sha = tipOf(body.head);
      if (!sha) return answer(response, 422, { message: "Validation Failed", errors: [{ resource: "PullRequest", field: "head", code: "invalid" }] });
      if ([...stub.pulls.values()].some((pull) => pull.state === "open" && pull.head === body.head))
        return answer(response, 422, {
          message: "Validation Failed",
          errors: [{ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${input.owner}:${body.head}.` }],
        });
      const pull: StubPull = {
        number: next++,
        title: body.title,
        body: body.body ?? "",
        state: "open",
        merged: false,
        merge_commit_sha: null,
        head: body.head,
        base: body.base,
        heads: [sha],
        reviews: [],
        comments: [],
      };
      stub.pulls.set(pull.number, pull);
      return answer(response, 201, shape(pull));
    }
    const onePull = /^\/pulls\/(\d+)$/.exec(rest);
    if (onePull) {
      const found = onePull;
      const pull = stub.pulls.get(Number(found[1]));
      if (!pull) return answer(response, 404, { message: "Not Found" });
      refresh(pull);
      if (method === "PATCH") Object.assign(pull, body.title ? { title: body.title } : {}, body.body !== undefined ? { body: body.body } : {});
      return answer(response, 200, shape(pull));
    }
    const mergePath = /^\/pulls\/(\d+)\/merge$/.exec(rest);
    if (mergePath && method === "PUT") {
      const found = mergePath;
      const pull = stub.pulls.get(Number(found[1]));
      if (!pull) return answer(response, 404, { message: "Not Found" });
      refresh(pull);
      const scripted = stub.mergeAnswers.shift();
      if (scripted === 405 || pull.state !== "open") return answer(response, 405, { message: "Pull Request is not mergeable" });
      if (scripted === 409 || (body.sha && body.sha !== pull.heads.at(-1))) return answer(response, 409, { message: "Head branch was modified. Review and try the merge again." });
      const sha = squash(pull.number, body.commit_title ?? pull.title, body.commit_message ?? "");
      return answer(response, 200, { sha, merged: true, message: "Pull Request successfully merged" });
    }
    const asyncPath = /^\/pulls\/(\d+)\/merge-async(?:\/([^/]+))?$/.exec(rest);
    if (asyncPath && stub.asyncMerge && (asyncPath[2] ? method === "GET" : method === "PUT")) {
      const found = asyncPath;
      const pull = stub.pulls.get(Number(found[1]));
      if (!pull) return answer(response, 404, { message: "Not Found" });
      refresh(pull);
      const pending = (uuid: string, message: string) => {
        const asked = asyncRequests.get(uuid);
        return { status: "pending", details: { message, uuid, merge_method: "squash", merge_action: "default", expected_head_sha: asked?.sha ?? "" } };
      };
      if (found[2]) {
        const uuid = decodeURIComponent(found[2]);
        const asked = asyncRequests.get(uuid);
        if (!asked || asked.pull !== pull.number) return answer(response, 404, { message: "Not Found" });
        if (asked.result === undefined && asked.reads++ < stub.asyncPending) return answer(response, 200, pending(uuid, "Merge request is in progress."));
        if (asked.result === undefined) {
          // The background merge runs now, guarded by the head it was asked with.
          const failure = stub.asyncFailures.shift();
          if (failure) asked.result = { status: "failed", details: { message: failure } };
          else if (pull.state !== "open") asked.result = { status: "failed", details: { message: "Pull request is closed." } };
          else if (asked.sha !== pull.heads.at(-1)) asked.result = { status: "failed", details: { message: "Head branch was modified." } };
          else asked.result = { status: "merged", details: { message: "Pull request was merged.", sha: squash(pull.number, asked.title, asked.message) } };
        }
        return answer(response, 200, asked.result);
      }
      if (pull.merged) return answer(response, 200, { status: "merged", details: { message: "Pull request is already merged.", sha: pull.merge_commit_sha ?? "" } });
      if (pull.state !== "open") return answer(response, 400, { status: "failed", details: { message: "Pull request is closed." } });
      const running = [...asyncRequests.entries()].find(([, asked]) => asked.pull === pull.number && asked.result === undefined);
      if (running) return answer(response, 409, pending(running[0], "A merge request already exists for this pull request."));
      const uuid = `00000000-0000-4000-8000-${String(asyncRequests.size + 1).padStart(12, "0")}`;
      asyncRequests.set(uuid, { pull: pull.number, sha: body?.sha ?? pull.heads.at(-1) ?? "", title: body?.commit_title ?? pull.title, message: body?.commit_message ?? "", reads: 0 });
      return answer(response, 202, pending(uuid, "Merge request enqueued."));
    }
    const reviewPath = /^\/pulls\/(\d+)\/(reviews|comments)$/.exec(rest);
    if (reviewPath && method === "GET") {
      const found = reviewPath;
      const pull = stub.pulls.get(Number(found[1]));
      if (!pull) return answer(response, 404, { message: "Not Found" });
      const reviews = [...pull.reviews, ...pull.heads.flatMap((sha, nth) => stub.reviewsOn(sha, nth).map((review) => ({ ...review, commit_id: sha })))];
      return answer(response, 200, found[2] === "reviews" ? reviews.map((review, at) => ({ id: at + 1, ...review })) : pull.comments.map((comment, at) => ({ id: at + 1, ...comment })));
    }
    const commitPath = /^\/commits\/([0-9a-f]{40})\/(check-runs|statuses)$/.exec(rest);
    if (commitPath && method === "GET") {
      const found = commitPath;
      const sha = found[1] as string;
      const pull = [...stub.pulls.values()].find((candidate) => candidate.heads.includes(sha));
      const nth = pull ? pull.heads.indexOf(sha) : -1;
      if (found[2] === "statuses") {
        const statuses = pull ? stub.statuses(sha, nth) : [];
        return answer(
          response,
          200,
          statuses.map((status, at) => ({
            url: `${stub.api}/repos/${input.owner}/${input.repo}/statuses/${sha}`,
            avatar_url: null,
            id: at + 1,
            node_id: `S${at + 1}`,
            state: status.state,
            description: status.description,
            target_url: null,
            context: status.context,
            created_at: new Date(Date.now() - at * 1000).toISOString(),
            updated_at: new Date(Date.now() - at * 1000).toISOString(),
            creator: { login: status.creator, id: 100 + at, type: status.creator.endsWith("[bot]") ? "Bot" : "User" },
          })),
        );
      }
      const reads = (checkReads.get(sha) ?? 0) + 1;
      checkReads.set(sha, reads);
      const checks = pull && reads > stub.registerAfter ? stub.checks(sha, nth) : [];
      return answer(response, 200, {
        total_count: checks.length,
        check_runs: checks.map(({ app = ACTIONS_APP, ...check }, at) => ({
          id: at + 1,
          head_sha: sha,
          html_url: `${site}/runs/${at + 1}`,
          ...check,
          app: { ...app, node_id: `A${app.id}`, name: app.slug },
        })),
      });
    }
    const permissionPath = /^\/collaborators\/([^/]+)\/permission$/.exec(rest);
    if (permissionPath && method === "GET") {
      const login = decodeURIComponent(permissionPath[1] as string);
      const permission = stub.writers.has(login) ? "write" : "read";
      return answer(response, 200, { permission, role_name: permission, user: { login, id: 1, type: "User" } });
    }
    const rulesPath = /^\/rules\/branches\/([^/]+)$/.exec(rest);
    if (rulesPath && method === "GET") return answer(response, 200, stub.rules);
    const issuePath = /^\/issues\/(\d+)(\/comments)?$/.exec(rest);
    if (issuePath) {
      const issue = stub.issues.get(Number(issuePath[1]));
      if (!issue) return answer(response, 404, { message: "Not Found" });
      const url = `${site}/issues/${issue.number}`;
      const comment = (entry: StubIssue["comments"][number], at: number) => ({ id: at + 1, html_url: `${url}#issuecomment-${at + 1}`, ...entry, updated_at: entry.created_at });
      if (issuePath[2] && method === "GET") return answer(response, 200, issue.comments.map(comment));
      if (issuePath[2] && method === "POST") {
        issue.comments.push({ user: { login: "factory-bot" }, body: String(body.body), created_at: new Date().toISOString() });
        return answer(response, 201, comment(issue.comments.at(-1) as StubIssue["comments"][number], issue.comments.length - 1));
      }
      if (!issuePath[2] && method === "PATCH" && (body.state === "open" || body.state === "closed")) issue.state = body.state;
      if (!issuePath[2] && (method === "GET" || method === "PATCH")) {
        const { comments, pull, labels, ...fields } = issue;
        return answer(response, 200, {
          id: issue.number,
          html_url: url,
          ...fields,
          labels: labels.map((name, at) => ({ id: at + 1, name, color: "ededed" })),
          comments: comments.length,
          ...(pull ? { pull_request: { url: `${stub.api}/repos/${input.owner}/${input.repo}/pulls/${issue.number}` } } : {}),
        });
      }
    }
    const protectionPath = /^\/branches\/([^/]+)\/protection$/.exec(rest);
    if (protectionPath && method === "GET") {
      if (!stub.protection) return answer(response, 404, { message: "Branch not protected" });
      return answer(response, 200, stub.protection);
    }
    return answer(response, 404, { message: "Not Found" });
  };

  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    let raw = "";
    request.on("data", (chunk) => (raw += String(chunk)));
    request.on("end", () => {
      try {
        handle(request, response, raw);
      } catch (error) {
        answer(response, 500, { message: error instanceof Error ? error.message : String(error) });
      }
    });
  };
  const server: Server | HttpServer = input.http ? createHttpServer(listener) : createServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stub.api = `${input.http ? "http" : "https"}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}
