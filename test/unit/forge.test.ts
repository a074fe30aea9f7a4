import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import { protectionLine } from "../../src/doctor/forge-protection.js";
import { asyncAnswer, type CheckRun, type CommitStatus, type PullRequest, protectionOf, waitFor } from "../../src/forge/github.js";
import { pullBody } from "../../src/forge/pull-body.js";
import { fromWriters, judgePull, passedOn } from "../../src/forge/review-state.js";

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
const ACTIONS = { id: 15368, slug: "github-actions" };
const check = (conclusion: string | null, status = "completed", app = ACTIONS): CheckRun => ({ name: "ci", status, conclusion, output: { title: "t", summary: "expected 4, got 5", text: null }, app });
const status = (state: CommitStatus["state"], login: string, context = "ci"): CommitStatus => ({ context, state, description: state, creator: { login } });
const CI = { kind: "listed", checks: [{ context: "ci" }], from: "[forge] required_checks" } as const;
const judge = (input: Partial<Parameters<typeof judgePull>[0]> = {}) =>
  judgePull({ pull: pull(), head: HEAD, fork: "b".repeat(40), checks: [check("success")], statuses: [], reviews: [], comments: [], autoMerge: true, required: CI, ...input });

describe("judgePull", () => {
  it("merges a PR whose checks all passed on the gated head, with auto_merge; leaves it to a person without", () => {
    expect(judge()).toEqual({ kind: "merge" });
    expect(judge({ autoMerge: false })).toMatchObject({ kind: "person" });
    expect(judge({ checks: [], required: { kind: "none" } })).toEqual({ kind: "merge" }); // the config says there is no CI
  });

  it("merges only once every required check has passed on the head: none reported yet (the forge registers them after a push) waits", () => {
    expect(judge({ checks: [] })).toMatchObject({ kind: "wait", why: expect.stringContaining('waits for the required checks "ci" ([forge] required_checks)') });
    expect(judge({ checks: [{ ...check("success"), name: "lint" }] })).toMatchObject({ kind: "wait" });
    expect(judge({ checks: [check("skipped")] })).toEqual({ kind: "merge" });
    expect(judge({ checks: [], statuses: [status("success", "jenkins")] })).toEqual({ kind: "merge" });
    // Nothing says which checks: no failing check proves nothing, so a person merges.
    expect(judge({ required: { kind: "unknown" } })).toMatchObject({ kind: "person", why: expect.stringContaining("[forge] required_checks") });
    expect(judge({ checks: [], required: { kind: "unknown" } })).toMatchObject({ kind: "person" });
  });

  it("counts a required check only from the app that must report it, and a status by each poster's newest word", () => {
    const pinned = { kind: "listed", checks: [{ context: "ci", appId: ACTIONS.id }], from: "main's branch protection" } as const;
    expect(judge({ required: pinned })).toEqual({ kind: "merge" });
    expect(judge({ required: pinned, checks: [check("success", "completed", { id: 1, slug: "impostor" })] })).toMatchObject({ kind: "wait" });
    // A status from the pinned app (recognised by the slug its check runs carry); one from anyone else counts for nothing.
    expect(passedOn({ context: "ci", app: "github-actions" }, [], [status("success", "github-actions[bot]")])).toBe(true);
    expect(passedOn({ context: "ci", app: "github-actions" }, [], [status("success", "mallory")])).toBe(false);
    expect(passedOn({ context: "ci", appId: ACTIONS.id }, [], [status("success", "github-actions[bot]")])).toBe(false);
    // The CI failed; a newer "success" of the same context from someone else does not hide it.
    expect(judge({ checks: [], statuses: [status("success", "mallory"), status("failure", "github-actions[bot]")] })).toMatchObject({ kind: "feedback" });
    // The same poster's newer word does count.
    expect(judge({ checks: [], statuses: [status("success", "jenkins"), status("failure", "jenkins")] })).toEqual({ kind: "merge" });
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
  const protectedBy = (strict: boolean, contexts: string[], from = ["branch protection"]) => ({ kind: "protected", strict, contexts, checks: contexts.map((context) => ({ context })), from }) as const;
  it("is NOT ARMED without protection, without up-to-date-before-merging, or with it but no required check; armed with both", () => {
    expect(protectionLine("w", "main", { kind: "none" }).notArmed).toContain("main is not protected");
    expect(protectionLine("w", "main", protectedBy(false, [])).notArmed).toContain("up to date");
    expect(protectionLine("w", "main", protectedBy(true, [])).notArmed).toContain('GitHub enforces "up to date" only with a required check');
    expect(protectionLine("w", "main", protectedBy(true, ["ci"], ["rulesets"]))).toEqual({ what: "w: main's rulesets requires PRs up to date with main and checks ci" });
  });
});

describe("protectionOf (branch protection and rulesets as one requirement)", () => {
  it("joins classic protection's checks (with their apps) and the rulesets' required status checks", () => {
    expect(protectionOf(undefined, undefined)).toEqual({ kind: "none" });
    expect(protectionOf(undefined, [{ type: "pull_request", parameters: {} }])).toEqual({ kind: "none" });
    const classic = { required_status_checks: { strict: false, contexts: ["ci"], checks: [{ context: "ci", app_id: 15368 }] } };
    const rules = [
      { type: "required_status_checks", parameters: { strict_required_status_checks_policy: true, required_status_checks: [{ context: "lint" }, { context: "ci", integration_id: 15368 }] } },
    ];
    expect(protectionOf(classic, rules)).toEqual({
      kind: "protected",
      strict: true,
      contexts: ["ci", "lint"],
      checks: [{ context: "ci", appId: 15368 }, { context: "lint" }],
      from: ["branch protection", "rulesets"],
    });
    expect(protectionOf({ required_status_checks: { strict: true, contexts: ["old"] } }, [])).toMatchObject({ checks: [{ context: "old" }], from: ["branch protection"] });
  });
});

describe("fromWriters (whose review may become the next prompt)", () => {
  it("keeps the reviews and comments of users who may write; names the others", () => {
    const review = (login: string, state = "CHANGES_REQUESTED") => ({ user: { login }, state, body: "do X", commit_id: HEAD });
    const comment = (login: string) => ({ user: { login }, path: "a.py", line: 1, body: "rm -rf", commit_id: HEAD });
    const kept = fromWriters([review("alice"), review("mallory"), review("bob", "COMMENTED")], [comment("alice"), comment("eve")], new Set(["alice"]));
    expect(kept.reviews).toEqual([review("alice")]);
    expect(kept.comments).toEqual([comment("alice")]);
    expect(kept.ignored).toEqual(["eve", "mallory"]);
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
      requiredChecks: undefined,
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

  it("reads required_checks: names, a name pinned to its app, [] for no CI; refuses anything else naming the entry", () => {
    const forge = (text: string) => {
      const read = parseConfig(`${base}[target]\nremote = "origin"\nmode = "pull-request"\n[forge]\nrepo = "acme/w"\n${text}`);
      return read.ok ? read.config.forge?.requiredChecks : read.problems.map((problem) => `${problem.key}: ${problem.message}`);
    };
    expect(forge('required_checks = ["ci", { name = "test (ubuntu)", app = "github-actions" }]')).toEqual([{ context: "ci" }, { context: "test (ubuntu)", app: "github-actions" }]);
    expect(forge("required_checks = []")).toEqual([]);
    expect(forge("")).toBeUndefined();
    expect(forge('required_checks = "ci"')).toEqual([expect.stringContaining("forge.required_checks: must be an array of check names")]);
    expect(forge('required_checks = ["ci", 3, { name = "x", app = "Not A Slug" }]')).toEqual([
      expect.stringMatching(/^forge\.required_checks\[1\]: must be a check's name/),
      expect.stringMatching(/^forge\.required_checks\[2\]: must be a check's name/),
    ]);
  });
});
