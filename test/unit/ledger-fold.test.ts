import { describe, expect, it } from "vitest";
import { type EventBody, type LedgerEvent, stamp } from "../../src/ledger/events.js";
import { foldLedger } from "../../src/ledger/fold.js";

const owner = { run: "r1", pid: 42, host: "h" };
const events = (...bodies: EventBody[]): LedgerEvent[] => bodies.map((body) => stamp(body, new Date("2026-01-01T00:00:00Z")));
const claim = (attempt: number, sha = "v1"): EventBody => ({ kind: "claimed", packet: "A01", attempt, sha256: sha, ...owner });

describe("foldLedger", () => {
  it("starts every packet queued with nothing spent", () => {
    const state = foldLedger(events({ kind: "packet-registered", packet: "A01", sha256: "v1", file: "packets/A01-x.toml" }));
    expect(state.packets.get("A01")).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0, costUsd: 0, sha256: "v1" });
  });

  it("follows claim → running → retry → merged, summing cost per packet and run", () => {
    const state = foldLedger(
      events(
        { kind: "run-started", options: {}, ...owner },
        claim(1),
        { kind: "agent-finished", packet: "A01", attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.5, durationMs: 1 },
        { kind: "decided", packet: "A01", attempt: 1, decision: "retry", reasons: ["gate pytest failed"] },
        claim(2),
        { kind: "agent-finished", packet: "A01", attempt: 2, role: "implementer", outcome: "ok", costUsd: 0.25, durationMs: 1 },
        { kind: "agent-finished", packet: "A01", attempt: 2, role: "reviewer", outcome: "ok", costUsd: 0.25, durationMs: 1 },
        { kind: "merged", packet: "A01", attempt: 2, commit: "c0ffee", tree: "t" },
        { kind: "run-ended", run: "r1", outcome: "drained" },
      ),
    );
    const packet = state.packets.get("A01");
    expect(packet?.status).toEqual({ state: "merged", attempt: 2, commit: "c0ffee" });
    expect(packet?.attemptsUsed).toBe(2);
    expect(packet?.costUsd).toBe(1);
    expect(state.costUsd).toBe(1);
    expect([...state.runs.values()]).toEqual([expect.objectContaining({ run: "r1", costUsd: 1, ended: expect.objectContaining({ outcome: "drained" }) })]);
  });

  it("counts spend that belongs to no packet (a probe, a canary) in the total and its run's, never in a packet's", () => {
    const state = foldLedger(
      events(
        { kind: "run-started", options: {}, ...owner },
        { kind: "spent", for: "the preflight's model probe", agent: "claude", model: "m", costUsd: 0.02, run: "r1" },
        { kind: "spent", for: "doctor's reviewer canary", agent: "codex", model: "m", estimatedUsd: 1 },
        claim(1),
      ),
    );
    expect(state.costUsd).toBeCloseTo(1.02, 10);
    expect(state.runs.get("r1")?.costUsd).toBeCloseTo(0.02, 10);
    expect(state.packets.get("A01")?.costUsd).toBe(0);
  });

  it("records the retry's reasons while queued", () => {
    const state = foldLedger(events(claim(1), { kind: "decided", packet: "A01", attempt: 1, decision: "retry", reasons: ["a", "b"] }));
    expect(state.packets.get("A01")).toMatchObject({ status: { state: "queued" }, reason: "a; b", attemptsUsed: 1 });
  });

  it("shows a running packet with its owner", () => {
    const state = foldLedger(events(claim(1)));
    expect(state.packets.get("A01")?.status).toMatchObject({ state: "running", attempt: 1, owner });
  });

  it("does not count interrupted or refunded attempts, but never reuses their numbers", () => {
    const state = foldLedger(
      events(claim(1), { kind: "attempt-interrupted", packet: "A01", attempt: 1, reason: "the run died" }, claim(2), {
        kind: "decided",
        packet: "A01",
        attempt: 2,
        decision: "retry",
        reasons: ["gate error"],
        refund: true,
      }),
    );
    expect(state.packets.get("A01")).toMatchObject({ attemptsUsed: 0, lastAttempt: 2, status: { state: "queued" } });
  });

  it("blocks, then unblock grants more attempts and keeps history", () => {
    const state = foldLedger(events(claim(1), { kind: "blocked", packet: "A01", attempt: 1, reason: "planted test edited" }, { kind: "unblocked", packet: "A01", extraAttempts: 2, by: "ann" }));
    const packet = state.packets.get("A01");
    expect(packet).toMatchObject({ status: { state: "queued" }, extraAttempts: 2, attemptsUsed: 1 });
    expect(packet?.events.map((e) => e.kind)).toEqual(["claimed", "blocked", "unblocked"]);
  });

  it("holds at awaiting_human until approved and merged, or rejected", () => {
    const held = events(claim(1), { kind: "held", packet: "A01", attempt: 1, tree: "t1", branch: "factory/A01", commit: "c1", fork: "f1" });
    expect(foldLedger(held).packets.get("A01")?.status).toEqual({ state: "awaiting_human", attempt: 1, tree: "t1", branch: "factory/A01", commit: "c1", fork: "f1" });
    const rejected = foldLedger([...held, ...events({ kind: "rejected", packet: "A01", by: "ann", reason: "wrong name" })]);
    expect(rejected.packets.get("A01")).toMatchObject({ status: { state: "queued" }, reason: "rejected by ann: wrong name" });
  });

  it("reset starts over with no attempts used", () => {
    const state = foldLedger(events(claim(1), { kind: "blocked", packet: "A01", reason: "x" }, { kind: "reset", packet: "A01", by: "ann" }));
    expect(state.packets.get("A01")).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0, lastAttempt: 1 });
  });

  it("a new version of the packet does not inherit rulings on the old one", () => {
    const state = foldLedger(
      events(
        { kind: "packet-registered", packet: "A01", sha256: "v1", file: "f" },
        claim(1),
        { kind: "blocked", packet: "A01", reason: "defective packet" },
        { kind: "packet-registered", packet: "A01", sha256: "v2", file: "f" },
      ),
    );
    expect(state.packets.get("A01")).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0, sha256: "v2" });
  });

  it("a merged packet stays merged when its file changes, and says so", () => {
    const state = foldLedger(events(claim(1), { kind: "merged", packet: "A01", attempt: 1, commit: "c", tree: "t" }, { kind: "packet-registered", packet: "A01", sha256: "v2", file: "f" }));
    expect(state.packets.get("A01")).toMatchObject({ status: { state: "merged" }, changedSinceMerge: true, sha256: "v1" });
  });
});
