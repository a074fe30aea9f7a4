import { describe, expect, it } from "vitest";
import { validateResult } from "../../src/agents/result.js";
import { type AttemptEnd, agentCallEnd, decide } from "../../src/loop/decide.js";
import { parseEvidence, type Review, validateReview } from "../../src/review/contract.js";
import { effectiveVerdict } from "../../src/review/verdict.js";

const invariants = [
  { id: "sep", critical: true, assert: "dot is a thousands separator" },
  { id: "nice", critical: false, assert: "nice to have" },
];
const ruling = (id: string, status = "held", evidence: string | undefined = "api/a.py:3") => ({ id, status, ...(evidence ? { evidence } : {}) });

describe("validateReview", () => {
  it("accepts a complete review", () => {
    const check = validateReview({ packet: "B01", verdict: "accept", invariants: [ruling("sep"), ruling("nice", "unverifiable", undefined)], findings: [] }, "B01", invariants);
    expect(check.ok).toBe(true);
  });

  it("names every contract problem: omitted, unknown, duplicate, bad status, evidence missing, wrong packet", () => {
    const check = validateReview(
      {
        packet: "B02",
        verdict: "ship it",
        invariants: [ruling("sep"), ruling("sep"), ruling("ghost"), { id: "nice", status: "maybe" }],
        findings: [{ severity: "urgent", claim: "x" }],
      },
      "B01",
      invariants,
    );
    expect(check.ok).toBe(false);
    expect(!check.ok && check.errors).toEqual([
      '"packet" must be "B01", not "B02"',
      '"verdict" must be "accept", "revise" or "reject", not "ship it"',
      'invariants[1]: "sep" is ruled on twice',
      'invariants[2]: unknown invariant "ghost"',
      'invariant "nice": "status" must be "held", "violated" or "unverifiable", not "maybe"',
      'findings[0]: "severity" must be "blocker", "major" or "minor"',
    ]);
    const omitted = validateReview({ packet: "B01", verdict: "accept", invariants: [ruling("sep")] }, "B01", invariants);
    expect(!omitted.ok && omitted.errors).toEqual(['invariant "nice" has no ruling']);
    const noEvidence = validateReview({ packet: "B01", verdict: "accept", invariants: [ruling("sep", "held", "somewhere"), ruling("nice")] }, "B01", invariants);
    expect(!noEvidence.ok && noEvidence.errors[0]).toContain("needs evidence of the form path:line");
  });

  it("parses path:line evidence", () => {
    expect(parseEvidence("./api/a.py:42")).toEqual({ path: "api/a.py", line: 42 });
    expect(parseEvidence("api/a.py:10-12")).toEqual({ path: "api/a.py", line: 10 });
    expect(parseEvidence("api/a.py")).toBeUndefined();
  });
});

describe("effectiveVerdict", () => {
  const review = (overrides: Partial<Review> = {}): Review => ({
    verdict: "accept",
    invariants: [
      { id: "sep", status: "held", evidence: "a:1" },
      { id: "nice", status: "held", evidence: "a:2" },
    ],
    findings: [],
    ...overrides,
  });
  const verdict = (r: Review, options: { gatesGreen?: boolean; unresolved?: [string, string][] } = {}) =>
    effectiveVerdict({ review: r, invariants, gatesGreen: options.gatesGreen ?? true, unresolvedEvidence: new Map(options.unresolved ?? []) });

  it("keeps the reviewer's verdict when the facts agree", () => {
    expect(verdict(review())).toEqual({ verdict: "accept", overrides: [] });
    expect(verdict(review({ verdict: "revise" }))).toEqual({ verdict: "revise", overrides: [] });
  });

  it("reject always wins", () => {
    expect(verdict(review({ verdict: "reject" }), { gatesGreen: false })).toEqual({ verdict: "reject", overrides: [] });
  });

  it("overrides accept on red gates, a critical invariant not held, unresolved critical evidence, a blocker finding", () => {
    expect(verdict(review(), { gatesGreen: false }).overrides).toEqual(["reviewer said accept, but the gates are not green"]);
    expect(
      verdict(
        review({
          invariants: [
            { id: "sep", status: "unverifiable", evidence: undefined },
            { id: "nice", status: "held", evidence: "a:1" },
          ],
        }),
      ).verdict,
    ).toBe("revise");
    expect(verdict(review(), { unresolved: [["sep", "evidence a:1 cites a line that does not exist"]] }).overrides[0]).toContain('critical invariant "sep" is unverifiable');
    expect(verdict(review({ findings: [{ severity: "blocker", file: undefined, line: undefined, claim: "data loss", fix: undefined }] })).overrides).toEqual([
      "reviewer said accept, but blocker finding: data loss",
    ]);
  });

  it("rules a checked invariant held over the reviewer, recording the override; its other reasons still count", () => {
    const violated = review({
      invariants: [
        { id: "sep", status: "violated", evidence: "a:1" },
        { id: "nice", status: "held", evidence: "a:2" },
      ],
    });
    const checked = (r: Review, gatesGreen = true) => effectiveVerdict({ review: r, invariants, gatesGreen, unresolvedEvidence: new Map(), checked: new Set(["sep"]) });
    expect(checked(violated)).toEqual({ verdict: "accept", overrides: ['reviewer ruled invariant "sep" violated, but its check passed: held'] });
    expect(checked(violated, false).verdict).toBe("revise");
    expect(verdict(violated).verdict).toBe("revise"); // without the check, the reviewer's ruling stands
  });

  it("does not override for a non-critical invariant or a minor finding", () => {
    const r = review({
      invariants: [
        { id: "sep", status: "held", evidence: "a:1" },
        { id: "nice", status: "violated", evidence: "a:2" },
      ],
      findings: [{ severity: "minor", file: undefined, line: undefined, claim: "naming", fix: undefined }],
    });
    expect(verdict(r, { unresolved: [["nice", "gone"]] })).toEqual({ verdict: "accept", overrides: [] });
  });
});

describe("validateResult", () => {
  it("accepts a result, ignoring extra keys and recording verification", () => {
    const check = validateResult({ packet: "B01", status: "complete", summary: "done", extra: 1, verification: { pytest: "ok" } }, "B01");
    expect(check).toMatchObject({ ok: true, result: { status: "complete", verification: { pytest: "ok" }, deviations: [] } });
  });

  it("refuses a missing file, bad JSON, a wrong packet, a bad status, a blocked result without a reason", () => {
    expect(validateResult(undefined, "B01")).toEqual({ ok: false, errors: ["no result file was written"] });
    expect(validateResult("Unexpected token", "B01")).toMatchObject({ ok: false, errors: [expect.stringContaining("not JSON")] });
    const bad = validateResult({ packet: "B9", status: "done", summary: "" }, "B01");
    expect(!bad.ok && bad.errors.length).toBe(3);
    expect(validateResult({ packet: "B01", status: "blocked", summary: "x" }, "B01")).toMatchObject({ ok: false, errors: [expect.stringContaining("blocked_reason")] });
  });
});

describe("decide", () => {
  const input = (end: AttemptEnd, attemptsUsed = 1, gate: "auto" | "human" = "auto") => decide({ end, attemptsUsed, maxAttempts: 3, gate });
  const accepted: AttemptEnd = { kind: "reviewed", verdict: { verdict: "accept", overrides: [] }, feedback: [], counts: { held: 1, violated: 0, unverifiable: 0 } };

  it("merges accepted work, or holds it behind a human gate", () => {
    expect(input(accepted).decision).toBe("merge");
    expect(input(accepted, 1, "human").decision).toBe("hold");
  });

  it("retries failed gates with their findings as feedback, and blocks when attempts run out", () => {
    const end: AttemptEnd = {
      kind: "gates-red",
      reports: [{ name: "pytest", status: "fail", summary: "1 regression(s) of 9", findings: [{ file: "t::a", message: "passed at the baseline and fails now" }], durationMs: 1 }],
    };
    const retry = input(end);
    expect(retry).toMatchObject({ decision: "retry", refund: false, reasons: ["gate pytest failed: 1 regression(s) of 9"] });
    expect(retry.feedback[0]).toContain("t::a: passed at the baseline and fails now");
    expect(input(end, 3)).toMatchObject({ decision: "block", reasons: [expect.stringContaining("out of attempts (3/3)")] });
  });

  it("does not spend an attempt on the environment's errors", () => {
    const end: AttemptEnd = { kind: "gates-red", reports: [{ name: "ruff", status: "error", summary: "command not found", findings: [], durationMs: 1 }] };
    expect(input(end, 3)).toMatchObject({ decision: "retry", refund: true, environment: true });
    expect(input({ kind: "environment-error", reason: "install failed" }, 3)).toMatchObject({ decision: "retry", refund: true, environment: true });
  });

  it("blocks on spec drift, a defective packet, an implementer's block and a reviewer's reject", () => {
    for (const end of [
      { kind: "spec-drift", reason: "x" },
      { kind: "defective-packet", reason: "x" },
      { kind: "implementer-blocked", reason: "x" },
      { ...accepted, verdict: { verdict: "reject", overrides: [] } },
    ] as AttemptEnd[]) {
      expect(input(end).decision).toBe("block");
    }
  });

  it("retries an overridden accept with the override as the reason", () => {
    const end: AttemptEnd = { ...accepted, verdict: { verdict: "revise", overrides: ["reviewer said accept, but x"] }, feedback: ["finding"] } as AttemptEnd;
    expect(input(end)).toMatchObject({ decision: "retry", reasons: ["reviewer said accept, but x"], feedback: ["reviewer said accept, but x", "finding"] });
  });

  it("blocks a failure seen before (in a row or not), by its fingerprint, and not a different one", () => {
    const red = (test: string, ms: number, sha: string): AttemptEnd => ({
      kind: "gates-red",
      reports: [
        {
          name: "pytest",
          status: "fail",
          summary: `1 regression(s) of 9 (${ms}ms)`,
          durationMs: ms,
          tail: `took ${ms}ms at ${sha}`,
          findings: [{ file: test, message: "passed at the baseline and fails now" }],
        },
      ],
    });
    const first = input(red("t::a", 120, "abc1234def"));
    expect(first.fingerprint).toMatch(/^[0-9a-f]{12}$/);
    const earlierFingerprints = [first.fingerprint as string];
    const same = decide({ end: red("t::a", 340, "9876543fed"), attemptsUsed: 2, maxAttempts: 3, gate: "auto", earlierFingerprints });
    expect(same).toMatchObject({ decision: "block", fingerprint: first.fingerprint, reasons: [expect.stringContaining(`the same failure twice: ${first.fingerprint}`)] });
    const other = decide({ end: red("t::b", 340, "9876543fed"), attemptsUsed: 2, maxAttempts: 3, gate: "auto", earlierFingerprints });
    expect(other.decision).toBe("retry");
    expect(other.fingerprint).not.toBe(first.fingerprint);
    // The first failure again after a different one (19 failing, then 20, then the same 19): seen before, blocked.
    const again = decide({ end: red("t::a", 90, "1111111aaa"), attemptsUsed: 3, maxAttempts: 4, gate: "auto", earlierFingerprints: [first.fingerprint as string, other.fingerprint as string] });
    expect(again).toMatchObject({ decision: "block", reasons: [expect.stringContaining(`the same failure twice: ${first.fingerprint}`)] });
  });

  it("gives the environment's errors no fingerprint", () => {
    expect(input({ kind: "environment-error", reason: "install failed" }).fingerprint).toBeUndefined();
  });
});

describe("an agent call that did not succeed", () => {
  it("is the provider's when rate-limited, the machine's when killed by a signal, else the agent's", () => {
    expect(agentCallEnd("implementer", { status: "rate-limited", resetsAt: "2026-12-01T00:00:00Z" })).toEqual({
      kind: "rate-limited",
      role: "implementer",
      reason: "the implementer was rate-limited until 2026-12-01T00:00:00Z",
      resetsAt: "2026-12-01T00:00:00Z",
    });
    // A provider that failed (a 500) is waited out like a limit, and said as what it was (issue 57 §5).
    expect(agentCallEnd("reviewer", { status: "rate-limited", detail: "the provider failed (API 500), a server-side error: Internal server error" })).toMatchObject({
      reason: "the reviewer waits on its provider: the provider failed (API 500), a server-side error: Internal server error",
    });
    // A reset further away than rate_limit_wait: a failed call (attempt spent), its agent's packets wait for a later run.
    const far = agentCallEnd("implementer", { status: "rate-limited", resetsAt: "2099-01-01T00:00:00Z" }, { now: Date.parse("2026-12-01T00:00:00Z"), maxWaitMs: 30 * 60_000 });
    expect(far).toEqual({
      kind: "agent-failed",
      reason: "the implementer reports a rate limit until 2099-01-01T00:00:00Z, further away than rate_limit_wait (30m00s): a failed call",
      rateLimited: { role: "implementer", resetsAt: "2099-01-01T00:00:00Z" },
    });
    expect(decide({ end: far, attemptsUsed: 1, maxAttempts: 3, gate: "auto" })).toMatchObject({ decision: "retry", refund: false });
    expect(agentCallEnd("reviewer", { status: "crashed", detail: "killed by SIGKILL" })).toEqual({
      kind: "environment-error",
      reason: "the reviewer was killed by SIGKILL from outside the factory (out of memory, or a person); not counted",
    });
    expect(agentCallEnd("implementer", { status: "crashed", detail: "exited 1 without a result" })).toEqual({ kind: "agent-failed", reason: "the implementer crashed: exited 1 without a result" });
    expect(decide({ end: agentCallEnd("implementer", { status: "crashed", detail: "killed by SIGKILL" }), attemptsUsed: 1, maxAttempts: 3, gate: "auto" })).toMatchObject({
      decision: "retry",
      refund: true,
      environment: true,
    });
  });
});
