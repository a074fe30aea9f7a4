import { describe, expect, it } from "vitest";
import type { LedgerEvent } from "../../src/ledger/events.js";
import { stripTerminalEscapes, tailOf } from "../../src/process/run.js";
import { describeSpend, spendByRole } from "../../src/status/spend.js";

const call = (role: "implementer" | "reviewer", cost: { costUsd?: number; estimatedUsd?: number }): LedgerEvent =>
  ({
    v: 1,
    ts: "2026-11-30T00:00:00Z",
    kind: "agent-finished",
    packet: "P01",
    attempt: 1,
    role,
    outcome: "ok",
    durationMs: 1,
    costSource: cost.costUsd === undefined ? "unknown" : "reported",
    ...cost,
  }) as LedgerEvent;

describe("spend by role", () => {
  it("sums each role's calls, counting an unknown cost at its estimate and saying so", () => {
    const spends = spendByRole([call("implementer", { costUsd: 0.25 }), call("implementer", { costUsd: 0.5 }), call("reviewer", { estimatedUsd: 1 })]);
    expect(spends).toEqual([
      { role: "implementer", calls: 2, usd: 0.75, estimated: 0 },
      { role: "reviewer", calls: 1, usd: 1, estimated: 1 },
    ]);
    expect(describeSpend(spends)).toBe("implementer $0.75 (2 calls), reviewer $1.00 (1 call, 1 at its tier's estimate)");
  });
});

describe("gate output in feedback and the ledger", () => {
  it("carries no terminal escapes: colors, cursor moves and titles are stripped", () => {
    const colored = "\u001b[31m✖ doubles\u001b[0m\n\u001b[2K\u001b[1Gdone\u001b]0;title\u0007";
    expect(stripTerminalEscapes(colored)).toBe("✖ doubles\ndone");
    expect(tailOf(colored)).toBe("✖ doubles\ndone");
  });
});
