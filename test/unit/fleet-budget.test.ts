import { describe, expect, it } from "vitest";
import { type EventBody, stamp } from "../../src/ledger/events.js";
import { emptyState, foldInto } from "../../src/ledger/fold.js";
import { Budget, fleetSpend } from "../../src/loop/budget.js";
import { spendLine, spendView } from "../../src/status/night-spend.js";

const at = (iso: string) => new Date(iso);
const fold = (events: [EventBody, string][]) =>
  foldInto(
    emptyState(),
    events.map(([body, ts]) => stamp(body, at(ts))),
  );
const started = (call: string, packet: string, attempt: number, reservedUsd: number): EventBody => ({
  kind: "agent-started",
  packet,
  attempt,
  role: "implementer",
  tier: "basic",
  call,
  reservedUsd,
  run: "r1",
});
const finished = (call: string, packet: string, attempt: number, costUsd: number): EventBody => ({
  kind: "agent-finished",
  packet,
  attempt,
  call,
  role: "implementer",
  outcome: "ok",
  durationMs: 1,
  costUsd,
  tier: "basic",
});

describe("the fleet's spend in the ledger", () => {
  it("holds a call's reservation while it runs, settles it at its cost, and charges the reservation of a call its attempt lost (a killed worker)", () => {
    const state = fold([
      [started("c1", "A", 1, 0.5), "2026-12-07T01:00:00Z"],
      [started("c2", "B", 1, 0.5), "2026-12-07T01:05:00Z"],
      [finished("c1", "A", 1, 0.2), "2026-12-07T01:10:00Z"],
    ]);
    expect(Object.keys(state.openCalls)).toEqual(["c2"]);
    expect(fleetSpend(state, 3_600_000 * 12, Date.parse("2026-12-07T02:00:00Z"))).toEqual({ spentUsd: 0.2, reservedUsd: 0.5 });
    // B's worker died; recovery interrupts its attempt: the open call cost what it reserved.
    foldInto(state, [stamp({ kind: "attempt-interrupted", packet: "B", attempt: 1, reason: "its worker died" }, at("2026-12-07T03:00:00Z"))]);
    expect(state.openCalls).toEqual({});
    expect(state.costUsd).toBeCloseTo(0.7, 10);
    expect(state.packets.get("B")?.costUsd).toBe(0.5);
    expect(state.tierCosts.basic).toEqual({ calls: 1, usd: 0.2 });
  });

  it("counts only the window's hours; without a window the cap is this process's own count", () => {
    const state = fold([
      [{ kind: "spent", for: "probe", agent: "a", model: "m", costUsd: 3 }, "2026-12-06T10:00:00Z"],
      [{ kind: "spent", for: "probe", agent: "a", model: "m", costUsd: 1 }, "2026-12-07T05:30:00Z"],
    ]);
    const now = Date.parse("2026-12-07T06:00:00Z");
    expect(fleetSpend(state, 12 * 3_600_000, now).spentUsd).toBe(1);
    expect(fleetSpend(state, 24 * 3_600_000, now).spentUsd).toBe(4);
    const fleet = new Budget(1.5, 12 * 3_600_000);
    expect(fleet.exhausted(state, now)).toBeUndefined();
    foldInto(state, [stamp(started("c9", "C", 1, 0.5), at("2026-12-07T05:40:00Z"))]);
    expect(fleet.exhausted(state, now)).toBe("the cost cap of $1.50 for the last 12h is reached across every worker ($1.00 spent, $0.50 reserved by calls in flight)");
    const own = new Budget(1.5);
    expect(own.exhausted(state, now)).toBeUndefined(); // a run's own: nothing spent by this process yet
    own.add(1.5);
    expect(own.exhausted(state, now)).toContain("spent this run");
  });

  it("forecasts the queue at its tiers' recorded averages, a tier's estimate before it has any", () => {
    const state = fold([[finished("c1", "A", 1, 0.3), "2026-12-07T01:00:00Z"]]);
    const view = spendView({
      state,
      queued: [
        { tier: "basic", reviewer: "strong" },
        { tier: "basic", reviewer: "strong" },
      ],
      tiers: [
        { name: "basic", estimateUsd: 9 },
        { name: "strong", estimateUsd: 1 },
      ],
      capUsd: 10,
      windowMs: 12 * 3_600_000,
      now: Date.parse("2026-12-07T02:00:00Z"),
    });
    expect(view).toEqual({ window_hours: 12, spent_usd: 0.3, reserved_usd: 0, cap_usd: 10, queued: 2, queue_usd: 2.6 });
    expect(spendLine(view)).toBe("Spend: spent $0.30 in the last 12h of a $10.00 cap; the 2 queued packet(s): about $2.60 more, one attempt each at their tiers' recorded averages.");
  });
});
