import { describe, expect, it } from "vitest";
import { resetFromText } from "../../src/agents/usage.js";
import { AgentWaits, rateLimitWait } from "../../src/loop/rate-limits.js";

const now = Date.parse("2026-11-30T20:00:00Z");
const MINUTE = 60_000;

describe("rate limits", () => {
  it("waits until the reported reset; one further away than rate_limit_wait is not waited out in this run", () => {
    expect(rateLimitWait({ resetsAt: "2026-11-30T20:05:00Z", strikes: 1, now, maxWaitMs: 30 * MINUTE, agent: "a" })).toEqual({ until: now + 5 * MINUTE });
    expect(rateLimitWait({ resetsAt: "2026-11-30T22:00:00Z", strikes: 1, now, maxWaitMs: 30 * MINUTE, agent: "a" })).toEqual({ until: Date.parse("2026-11-30T22:00:00Z"), beyond: true });
    const waits = new AgentWaits();
    waits.limit("far", "2099-01-01T00:00:00Z", now, 30 * MINUTE);
    waits.limit("near", "2026-11-30T20:05:00Z", now, 30 * MINUTE);
    expect(waits.beyond(now, 30 * MINUTE)).toEqual([{ agent: "far", until: Date.parse("2099-01-01T00:00:00Z") }]);
    expect(waits.waiting("far", now + 60 * MINUTE)).toBe(true);
  });

  it("without a reset, backs off from 30 s, doubling with each limit in a row, capped by rate_limit_wait", () => {
    const waits = [1, 2, 3, 4, 8].map((strikes) => rateLimitWait({ resetsAt: undefined, strikes, now, maxWaitMs: 3 * MINUTE, agent: "a" }));
    expect(waits).toEqual([30_000, 60_000, 120_000, 180_000, 180_000].map((ms) => ({ until: now + ms })));
  });

  it("an agent's limits in a row count up until a call gets through; other agents do not wait", () => {
    const waits = new AgentWaits();
    expect(waits.limit("codex", undefined, now, 30 * MINUTE)).toEqual({ until: now + 30_000 });
    expect(waits.limit("codex", undefined, now, 30 * MINUTE)).toEqual({ until: now + 60_000 });
    expect(waits.waiting("codex", now + 59_000)).toBe(true);
    expect(waits.waiting("claude", now)).toBe(false);
    expect(waits.nextEnd(now)).toBe(now + 60_000);
    waits.clear("codex");
    expect(waits.limit("codex", undefined, now, 30 * MINUTE)).toEqual({ until: now + 60_000 }); // an earlier, longer wait is kept
  });

  it("from the second limit in a row, waits at least the backoff however soon the reported reset is", () => {
    const soon = "2026-11-30T20:00:01Z";
    const waits = [1, 2, 3].map((strikes) => rateLimitWait({ resetsAt: soon, strikes, now, maxWaitMs: 30 * MINUTE, agent: "a" }));
    expect(waits).toEqual([{ until: now + 1_000 }, { until: now + 30_000 }, { until: now + 60_000 }]);
    expect(rateLimitWait({ resetsAt: "2026-11-30T20:05:00Z", strikes: 2, now, maxWaitMs: 30 * MINUTE, agent: "a" })).toEqual({ until: now + 5 * MINUTE });
  });

  it("halts, naming the agent, after rate_limit_max_waits limits in a row; a call that gets through starts the count again", () => {
    const waits = new AgentWaits();
    for (let strike = 1; strike <= 3; strike++) expect(waits.limit("codex", undefined, now, 30 * MINUTE, 3)).toHaveProperty("until");
    expect(waits.limit("codex", undefined, now, 30 * MINUTE, 3)).toEqual({ halt: expect.stringContaining('agent "codex" reported a rate limit 4 times in a row') });
    waits.clear("codex");
    expect(waits.limit("codex", undefined, now, 30 * MINUTE, 3)).toHaveProperty("until");
  });

  it("reads the reset from what Codex says", () => {
    expect(resetFromText("Rate limit reached for gpt-5 in organization org-x on tokens per min. Please try again in 6.5s.", now)).toBe(new Date(now + 6500).toISOString());
    expect(resetFromText("You've hit your usage limit. Try again in 2 minutes.", now)).toBe(new Date(now + 2 * MINUTE).toISOString());
    expect(resetFromText("429 Too Many Requests", now)).toBeUndefined();
  });
});
