import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import { protectionLine } from "../../src/doctor/forge-protection.js";
import { asyncAnswer, waitFor, type CheckRun, type PullRequest } from "../../src/forge/github.js";
import { pullBody } from "../../src/forge/pull-body.js";
import { judgePull } from "../../src/forge/review-state.js";

const HEAD = "a".repeat(40);
const pull = (extra: Partial<PullRequest> = {}): PullRequest => ({
  number: 7,
  html_url: "https://github.example/acme/w/pull/7",
  state: "open",
  merged: false,
  merge_commit_sha: null,
  mergeable: true,
  head: { ref: "factory/P01", sha: HEAD },
  base: { ref: "main", sha: "b".repeat(40) },
  ...extra,
});
const check = (conclusion: string | null, status = "completed"): CheckRun => ({ name: "ci", status, conclusion, output: { title: "t", summary: "expected 4, got 5", text: null } });
const judge = (input: Partial<Parameters<typeof judgePull>[0]> = {}) =>
  judgePull({ pull: pull(), head: HEAD, fork: "b".repeat(40), checks: [check("success")], statuses: [], reviews: [], comments: [], autoMerge: true, ...input });

describe("judgePull", () => {
  it("merges a PR whose checks all passed on the gated head, with auto_merge; leaves it to a person without", () => {
    expect(judge()).toEqual({ kind: "merge" });
    expect(judge({ autoMerge: false })).toMatchObject({ kind: "person" });
    expect(judge({ checks: [] })).toEqual({ kind: "merge" });
  });

  it("sends a failed check or a failed status back as feedback, with the check's own words", () => {
    expect(judge({ checks: [check("success"), check("failure")] })).toEqual({ kind: "feedback", lines: [`The forge's check "ci" failure on PR #7:\nt\nexpected 4, got 5`] });
    expect(judge({ statuses: [{ context: "ci/legacy", state: "error", description: "boom" }] })).toMatchObject({ kind: "feedback", lines: [expect.stringContaining('"ci/legacy" is error')] });
  });

  it("sends changes requested on the gated head back, with the review comments; not a request on an earlier head, nor one a reviewer approved since", () => {
    const requested = { user: { login: "ana" }, state: "CHANGES_REQUESTED", body: "rename it", commit_id: HEAD };
    const comment = { user: { login: "ana" }, path: "src/a.js", line: 3, body: "why?", commit_id: HEAD };
    expect(judge({ reviews: [requested], comments: [comment] })).toEqual({ kind: "feedback", lines: ["ana requested changes on PR #7: rename it", "ana on src/a.js:3: why?"] });
    expect(judge({ reviews: [{ ...requested, commit_id: "c".repeat(40) }] })).toEqual({ kind: "merge" });
    expect(judge({ reviews: [requested, { ...requested, state: "APPROVED" }] })).toEqual({ kind: "merge" });
    expect(judge({ reviews: [requested, { ...requested, state: "COMMENTED" }] }).kind).toBe("feedback");
  });

  it("brings a PR whose base moved since its head was gated up to date first; a failed check still comes back as feedback", () => {
    const moved = pull({ base: { ref: "main", sha: "e".repeat(40) } });
    expect(judge({ pull: moved })).toEqual({ kind: "behind", base: "e".repeat(40) });
    expect(judge({ pull: moved, autoMerge: false })).toEqual({ kind: "behind", base: "e".repeat(40) });
    expect(judge({ pull: moved, checks: [check("failure")] }).kind).toBe("feedback");
  });

  it("waits while checks run or the forge has not worked out mergeability", () => {
    expect(judge({ checks: [check(null, "in_progress")] })).toMatchObject({ kind: "wait" });
    expect(judge({ statuses: [{ context: "ci", state: "pending", description: null }] })).toMatchObject({ kind: "wait" });
    expect(judge({ pull: pull({ mergeable: null }) })).toMatchObject({ kind: "wait" });
  });

  it("says merged, closed, or a head someone else pushed, before anything else", () => {
    expect(judge({ pull: pull({ merged: true, state: "closed", merge_commit_sha: "m".repeat(40) }) })).toEqual({ kind: "merged", commit: "m".repeat(40) });
    expect(judge({ pull: pull({ state: "closed" }) })).toEqual({ kind: "closed" });
    expect(judge({ pull: pull({ head: { ref: "factory/P01", sha: "d".repeat(40) } }) })).toEqual({ kind: "head-moved", sha: "d".repeat(40) });
  });
});

describe("asyncAnswer (GitHub's asynchronous merge result)", () => {
  it("merged carries the merge commit; pending and a merge queue wait; failed falls back to the synchronous merge", () => {
    expect(asyncAnswer(7, HEAD, { status: "merged", details: { message: "Pull request was merged.", sha: "c".repeat(40) } })).toEqual({ kind: "merged", sha: "c".repeat(40) });
    expect(asyncAnswer(7, HEAD, { status: "enqueued", details: { message: "Pull request is in the merge queue." } })).toEqual({
      kind: "merging",
      message: "PR #7 is in the forge's merge queue (Pull request is in the merge queue.)",
    });
    expect(asyncAnswer(7, HEAD, { status: "pending", details: { uuid: "u-1", expected_head_sha: HEAD } })).toEqual({
      kind: "merging",
      message: "the forge is merging PR #7 in the background (request u-1)",
    });
    expect(asyncAnswer(7, HEAD, { status: "pending", details: { uuid: "u-0", expected_head_sha: "d".repeat(40) } })?.kind === "merging").toBe(true);
    expect(asyncAnswer(7, HEAD, { status: "pending", details: { uuid: "u-0", expected_head_sha: "d".repeat(40) } })).toMatchObject({ message: expect.stringContaining("an earlier head dddddddddd") });
    expect(asyncAnswer(7, HEAD, { status: "failed", details: { message: "Merge conflict" } })).toBeUndefined();
  });
});

describe("waitFor (a forge answer worth waiting out)", () => {
  const answer = (status: number, headers: Record<string, string> = {}) => ({ status, headers: new Headers(headers) });
  it("honours retry-after and x-ratelimit-reset; waits on a 5xx; not on a 4xx that waiting cannot change", () => {
    expect(waitFor(answer(503, { "retry-after": "3" }), 0)).toBe(3000);
    expect(waitFor(answer(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "100" }), 90_000)).toBe(10_000);
    expect(waitFor(answer(429), 0)).toBe(60_000);
    expect(waitFor(answer(502), 0)).toBe(1000);
    expect(waitFor(answer(403), 0)).toBeUndefined();
    expect(waitFor(answer(422), 0)).toBeUndefined();
  });
});

describe("protectionLine", () => {
  it("is NOT ARMED without branch protection or without up-to-date-before-merging; armed with it", () => {
    expect(protectionLine("w", "main", { kind: "none" }).notArmed).toContain("main is not protected");
    expect(protectionLine("w", "main", { kind: "protected", strict: false, contexts: [] }).notArmed).toContain("up to date");
    expect(protectionLine("w", "main", { kind: "protected", strict: true, contexts: ["ci"] })).toEqual({ what: "w: the forge requires PRs up to date with main and checks ci" });
  });
});

describe("pullBody", () => {
  it("names each invariant with its ruling and evidence, the gates and the cost", () => {
    const { title, body } = pullBody({
      packet: { id: "P01", goal: "Add double", file: "packets/P01.toml", invariants: [{ id: "doubles", assert: "double(n) | n * 2" } as never, { id: "pure", assert: "no I/O" } as never] },
      attempt: 2,
      gates: [{ name: "test", status: "pass", summary: "2/2 passed" }],
      rulings: [{ id: "doubles", status: "held", evidence: "src/double.js:2" }],
      costUsd: 0.5,
      message: "Add double\n\nFactory-Packet: P01\n",
    });
    expect(title).toBe("Add double");
    expect(body).toContain("| `doubles` | double(n) \\| n * 2 | held — `src/double.js:2` |");
    expect(body).toContain("| `pure` | no I/O | not ruled |");
    expect(body).toContain("| test | pass | 2/2 passed |");
    expect(body).toContain("Cost so far: $0.50.");
    expect(body).toContain("Factory-Packet: P01");
  });
});

describe("[target] mode and [forge] in the config", () => {
  const base = 'target_branch = "main"\n[surfaces.app]\ndir = "."\n';
  it("reads pull-request mode with its forge; refuses it without a remote, a forge table, a repo, or with a token written in", () => {
    const read = parseConfig(`${base}[target]\nremote = "origin"\nmode = "pull-request"\n[forge]\nrepo = "acme/w"\nauto_merge = true\n`);
    expect(read.ok && read.config.forge).toEqual({
      kind: "github",
      api: "https://api.github.com",
      repo: "acme/w",
      tokenEnv: "GITHUB_TOKEN",
      autoMerge: true,
      pollMs: 30_000,
      closeLabel: "factory:close",
    });
    const messages = (text: string) => (parseConfig(`${base}${text}`) as { problems: { message: string }[] }).problems?.map((problem) => problem.message).join("\n") ?? "";
    expect(messages('[target]\nmode = "pull-request"\n[forge]\nrepo = "acme/w"\n')).toContain("lands on a shared remote");
    expect(messages('[target]\nremote = "origin"\nmode = "pull-request"\n')).toContain("needs a [forge] table");
    expect(messages('[target]\nremote = "origin"\nmode = "pull-request"\n[forge]\nkind = "github"\n')).toContain('repo = "acme/widgets"');
    expect(messages('[target]\nremote = "origin"\nmode = "pull-request"\n[forge]\nrepo = "acme/w"\ntoken = "ghp_x"\n')).toContain("never written in the config");
    expect(messages('[target]\nremote = "origin"\nmode = "merge"\n')).toContain('write "push" or "pull-request"');
  });
});
