import { describe, expect, it } from "vitest";
import { type EventBody, stamp } from "../../src/ledger/events.js";
import { afterBreak, lineRanges, type NumberedLedger } from "../../src/ledger/verify.js";

const owner = { run: "r2", pid: 1, host: "h" };
const numbered = (bodies: EventBody[], broken?: number): NumberedLedger => ({
  events: bodies.map((body, at) => ({ line: at + 1, event: stamp(body) })),
  warnings: [],
  lines: bodies.length,
  ...(broken ? { broken: { line: broken, reason: "edited" } } : {}),
});

describe("what rests on a broken ledger line", () => {
  const bodies: EventBody[] = [
    { kind: "claimed", packet: "A", attempt: 1, sha256: "a", run: "r1", pid: 1, host: "h" },
    { kind: "merged", packet: "A", attempt: 1, commit: "c", tree: "t" },
    { kind: "run-started", options: {}, ...owner },
    { kind: "claimed", packet: "B", attempt: 1, sha256: "b", ...owner },
    { kind: "agent-finished", packet: "B", attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.5, durationMs: 1 },
    { kind: "blocked", packet: "B", attempt: 1, reason: "same failure twice" },
    { kind: "spent", for: "probe", agent: "x", model: "m", estimatedUsd: 0.25, run: "r2" },
  ];

  it("names the packets, runs and spend from the break on, and nothing before it", () => {
    const after = afterBreak(numbered(bodies, 3));
    expect(after).toEqual({
      from: 3,
      to: 7,
      packets: [{ id: "B", lines: [4, 5, 6], status: { state: "blocked", reason: "same failure twice" }, attempts: 1, costUsd: 0.5 }],
      runs: ["r2"],
      costUsd: 0.75,
    });
    expect(afterBreak(numbered(bodies, 2))?.packets.map((packet) => packet.id)).toEqual(["A", "B"]);
  });

  it("is nothing when the chain holds", () => {
    expect(afterBreak(numbered(bodies))).toBeUndefined();
  });

  it("writes line numbers as ranges", () => {
    expect(lineRanges([4, 5, 6, 9, 11, 12])).toBe("4–6, 9, 11–12");
    expect(lineRanges([3])).toBe("3");
  });
});
