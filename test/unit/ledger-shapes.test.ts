import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EVENT_KINDS, type EventBody, type EventKind } from "../../src/ledger/events.js";
import { fileLedger } from "../../src/ledger/file-ledger.js";
import { ledgerPath } from "../../src/ledger/store.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "factory-ledger-shapes-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const owner = { run: "r1", pid: 1, host: "h" };
/** One well-formed event of every kind, about packet A. */
const SAMPLES: Record<EventKind, EventBody> = {
  "run-started": { kind: "run-started", options: {}, ...owner },
  "run-ended": { kind: "run-ended", run: "r1", outcome: "drained", reason: "done" },
  "remote-unreachable": { kind: "remote-unreachable", run: "r1", remote: "origin", since: "2026-12-03T00:00:00.000Z", reason: "git fetch origin main failed" },
  "remote-reachable": { kind: "remote-reachable", run: "r1", remote: "origin" },
  "repairs-first": { kind: "repairs-first", run: "r1", surface: "app", gates: ["lint"], repairers: ["R01"], waiting: ["P02"] },
  "run-lock-taken-over": { kind: "run-lock-taken-over", run: "r1", previous: { pid: 2, host: "h", startedAt: "x" } },
  spent: { kind: "spent", for: "probe", agent: "claude", model: "m", costUsd: 0.1, run: "r1" },
  "ledger-restarted": { kind: "ledger-restarted", from: "ledger.old.jsonl", by: "me", brokenAt: 3 },
  "batch-gated": { kind: "batch-gated", packets: ["A", "B"], attempts: [1, 1], tip: "c", tree: "t", verdict: "green", failed: [], durationMs: 5, run: "r1" },
  "packet-registered": { kind: "packet-registered", packet: "A", sha256: "s", file: "packets/A.toml" },
  "mutants-measured": {
    kind: "mutants-measured",
    packet: "A",
    commit: "c",
    made: 3,
    killed: 2,
    budget: 20,
    reason: "r",
    survivors: [{ file: "a.py", line: 1, description: "d" }],
    killedExample: { file: "a.py", line: 2, description: "d" },
  },
  assessed: { kind: "assessed", packet: "A", sha256: "s", ruling: "ready", tier: "advanced", findings: [{ claim: "c", quote: "q", where: "a.py:1" }] },
  claimed: { kind: "claimed", packet: "A", attempt: 1, sha256: "s", ...owner },
  "attempt-interrupted": { kind: "attempt-interrupted", packet: "A", attempt: 1, reason: "killed" },
  "baseline-measured": { kind: "baseline-measured", packet: "A", commit: "c", passed: 1, failed: 0, cached: false },
  planted: { kind: "planted", packet: "A", attempt: 1, commit: "c", files: ["t.py"] },
  "agent-finished": { kind: "agent-finished", packet: "A", attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.25, durationMs: 5 },
  "gate-finished": { kind: "gate-finished", packet: "A", attempt: 1, gate: "tests", result: "pass", durationMs: 5, exitCode: 0 },
  "review-recorded": {
    kind: "review-recorded",
    packet: "A",
    attempt: 1,
    verdict: "pass",
    effective: "pass",
    overrides: [],
    held: 1,
    violated: 0,
    unverifiable: 0,
    rulings: [{ id: "I1", status: "held" }],
  },
  decided: { kind: "decided", packet: "A", attempt: 1, decision: "retry", reasons: ["r"], feedback: ["f"], fingerprint: "fp", work: { commit: "c", from: "d" } },
  "outside-change-seen": { kind: "outside-change-seen", packet: "A", attempt: 1, changes: ["x"] },
  "flaky-found": { kind: "flaky-found", packet: "A", attempt: 1, gate: "pytest", test: "t::x", tip: "c", tipRuns: ["passed", "failed"], candidateRuns: ["failed"] },
  "flaky-steady": { kind: "flaky-steady", packet: "A", attempt: 1, gate: "pytest", test: "t::x", tip: "c", tipRuns: ["passed", "passed", "passed"] },
  continued: { kind: "continued", packet: "A", attempt: 2, fromAttempt: 1, commit: "c" },
  "merge-blocked": { kind: "merge-blocked", packet: "A", attempt: 1, reason: "dirty", commit: "c", fork: "f" },
  merged: { kind: "merged", packet: "A", attempt: 1, commit: "c", tree: "t" },
  held: { kind: "held", packet: "A", attempt: 1, tree: "t", branch: "factory/A", commit: "c", fork: "f" },
  "pr-opened": { kind: "pr-opened", packet: "A", attempt: 1, number: 7, url: "https://github.example/acme/w/pull/7", branch: "factory/A", head: "c", tree: "t", fork: "f" },
  asked: { kind: "asked", packet: "A", attempt: 1, sha256: "s", question: "Which unit?", suggestions: ["seconds", "ms"] },
  answered: { kind: "answered", packet: "A", sha256: "s", attempt: 1, by: "me", answer: "seconds" },
  approved: { kind: "approved", packet: "A", by: "me", tree: "t" },
  rejected: { kind: "rejected", packet: "A", by: "me", reason: "no" },
  blocked: { kind: "blocked", packet: "A", attempt: 1, reason: "stuck", fix: "edit" },
  unblocked: { kind: "unblocked", packet: "A", extraAttempts: 1, by: "me" },
  reset: { kind: "reset", packet: "A", by: "me" },
  "landing-gone-acknowledged": { kind: "landing-gone-acknowledged", packet: "A", commit: "c".repeat(40), by: "me" },
  "agent-started": { kind: "agent-started", packet: "A", attempt: 1, role: "implementer", tier: "basic", call: "c1", reservedUsd: 0.2, run: "r1" },
  "implementer-reported": { kind: "implementer-reported", packet: "A", attempt: 1, status: "complete", verification: true },
  paused: { kind: "paused", by: "me", interrupt: false },
  resumed: { kind: "resumed", by: "me" },
};

/** A value of another type than the field's (a negative number for a cost). */
function wrong(name: string, value: unknown): unknown {
  if (name === "costUsd" || name === "estimatedUsd") return -3;
  if (typeof value === "string") return 7;
  if (typeof value === "number") return "7";
  if (typeof value === "boolean") return "yes";
  if (Array.isArray(value)) return "x";
  return ["x"];
}

/** Every field of every sample made wrong, one at a time, with where it is. */
const CORRUPTED = EVENT_KINDS.flatMap((kind) =>
  Object.entries(SAMPLES[kind])
    .filter(([name]) => name !== "kind")
    .map(([name, value]) => ({ kind, name, event: { v: 1, ts: "2026-12-01T00:00:00Z", ...SAMPLES[kind], [name]: wrong(name, value) } })),
);

describe("ledger lines of the wrong shape", () => {
  it("has a well-formed sample of every kind, which folds without a warning", async () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...EVENT_KINDS].sort());
    const ledger = fileLedger(root);
    await ledger.append(EVENT_KINDS.map((kind) => SAMPLES[kind]));
    expect((await ledger.read()).warnings).toEqual([]);
    expect((await ledger.history()).warnings).toEqual([]);
  });

  it(`ignores each of ${CORRUPTED.length} lines with one field of the wrong type, naming the line and the field, and folds the rest`, async () => {
    const ledger = fileLedger(root);
    await ledger.append([SAMPLES["packet-registered"], SAMPLES.claimed, SAMPLES["agent-finished"]]);
    for (const { event } of CORRUPTED) appendFileSync(ledgerPath(root), `${JSON.stringify(event)}\n`);
    await ledger.append([{ kind: "merged", packet: "B", attempt: 1, commit: "c", tree: "t" }]);

    const read = await ledger.read();
    const history = await ledger.history();
    for (const view of [read, history]) {
      expect(view.warnings).toHaveLength(CORRUPTED.length);
      CORRUPTED.forEach(({ kind, name }, at) => {
        const why = name === "packet" ? "without a packet id" : `whose fields do not fit (its "${name}" `;
        expect(view.warnings[at]).toContain(`:${4 + at}: a "${kind}" event ${why}`);
      });
    }
    // The corrupted lines changed nothing: A is as its three good events left it, B merged, the costs are numbers.
    expect(read.state.packets.get("A")).toMatchObject({ status: { state: "running" }, attemptsUsed: 1, costUsd: 0.25 });
    expect(read.state.packets.get("B")?.status.state).toBe("merged");
    expect(read.state.costUsd).toBe(0.25);
    expect(history.state.packets.get("A")?.events).toHaveLength(3);
  });

  it("ignores a retry whose continued work names no commit", async () => {
    const ledger = fileLedger(root);
    await ledger.append([SAMPLES["packet-registered"]]);
    appendFileSync(ledgerPath(root), `${JSON.stringify({ v: 1, ts: "t", ...SAMPLES.decided, work: { commit: 5 } })}\n`);
    expect((await ledger.read()).warnings).toEqual([expect.stringContaining(`its "work" does not name a commit`)]);
  });
});
