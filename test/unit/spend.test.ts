import { describe, expect, it } from "vitest";
import type { LedgerEvent } from "../../src/ledger/events.js";
import { describeSpend, spendByRole } from "../../src/status/spend.js";

const call = (role: "implementer" | "reviewer", cost: { costUsd?: number; estimatedUsd?: number }): LedgerEvent =>
  ({ v: 1, ts: "2026-11-30T00:00:00Z", kind: "agent-finished", packet: "P01", attempt: 1, role, outcome: "ok", durationMs: 1, costSource: cost.costUsd === undefined ? "unknown" : "reported", ...cost }) as LedgerEvent;

describe("spend by role", () => {
  it("sums each role's calls, counting an unknown cost at its estimate and saying so", () => {
    const spends = spendByRole([call("implementer", { costUsd: 0.25 }), call("implementer", { costUsd: 0.5 }), call("reviewer", { estimatedUsd: 1 })]);
    expect(spends).toEqual([{ role: "implementer", calls: 2, usd: 0.75, estimated: 0 }, { role: "reviewer", calls: 1, usd: 1, estimated: 1 }]);
    expect(describeSpend(spends)).toBe("implementer $0.75 (2 calls), reviewer $1.00 (1 call, 1 at its tier's estimate)");
  });
});
