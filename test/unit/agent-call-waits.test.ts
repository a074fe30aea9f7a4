import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentAdapter, AgentOutcome, AgentRequest } from "../../src/agents/types.js";
import type { Config } from "../../src/config/types.js";
import { fileLedger } from "../../src/ledger/file-ledger.js";
import { readLedger } from "../../src/ledger/store.js";
import { type AgentCall, callAgent } from "../../src/loop/agent-call.js";
import { Budget } from "../../src/loop/budget.js";
import type { RunContext } from "../../src/loop/context.js";
import { AgentWaits } from "../../src/loop/rate-limits.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An adapter that is rate-limited (for `limitMs`) on its first call only, and records when each call started. */
function limitedOnce(limitMs: number): AgentAdapter & { starts: { packet: string; repeat: number; at: number }[] } {
  const starts: { packet: string; repeat: number; at: number }[] = [];
  return {
    starts,
    async run(request: AgentRequest): Promise<AgentOutcome> {
      starts.push({ packet: request.packet, repeat: request.repeat ?? 0, at: Date.now() });
      const base = { rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "unknown" as const };
      if (starts.length === 1) return { ...base, status: "rate-limited", resetsAt: new Date(Date.now() + limitMs).toISOString() };
      return { ...base, status: "ok" };
    },
  };
}

function context(adapter: AgentAdapter, rateLimitWaitMs: number, estimateUsd?: number): { ctx: RunContext; notices: string[] } {
  const root = mkdtempSync(join(tmpdir(), "factory-agent-call-"));
  dirs.push(root);
  mkdirSync(join(root, ".factory", "state"), { recursive: true });
  const notices: string[] = [];
  const config = {
    tiers: [{ name: "basic", agent: "a", model: "m", estimateUsd }],
    sandbox: { kind: "none", home: [] },
    limits: { rateLimitWaitMs, agentTimeoutMs: 10_000, agentIdleTimeoutMs: 10_000, maxResultSizeBytes: 1_000_000 },
  } as unknown as Config;
  const ctx: RunContext = {
    root,
    ledger: fileLedger(root),
    config,
    branch: "main",
    owner: { run: "r", pid: process.pid, host: "h" },
    signal: new AbortController().signal,
    emit: (event) => void (event.kind === "notice" && notices.push(event.message)),
    adapters: new Map([["a", adapter]]),
    budget: new Budget(undefined),
    waits: new AgentWaits(),
  };
  return { ctx, notices };
}

function call(ctx: RunContext, packet: string): AgentCall {
  const worktree = join(ctx.root, packet);
  mkdirSync(worktree, { recursive: true });
  return { role: "implementer", packet, attempt: 1, tier: "basic", prompt: "do it", worktree, runDir: worktree, output: ".factory/result.json", round: 0 };
}

describe("an agent call under a rate limit", () => {
  it("is made again after the reset, in the same attempt, and another packet's call on the agent waits for the same reset", async () => {
    const adapter = limitedOnce(800);
    const { ctx, notices } = context(adapter, 60_000);
    const first = callAgent(ctx, call(ctx, "P01"));
    while (ctx.waits.until("a") === 0) await new Promise((resolve) => setTimeout(resolve, 10)); // P01's limit is known when P02 calls
    const second = callAgent(ctx, call(ctx, "P02"));
    expect((await first).outcome.status).toBe("ok");
    expect((await second).outcome.status).toBe("ok");
    const [limited, ...rest] = adapter.starts;
    expect(rest.map((start) => `${start.packet}/${start.repeat}`).sort()).toEqual(["P01/1", "P02/0"]);
    for (const start of rest) expect(start.at - (limited?.at ?? 0)).toBeGreaterThanOrEqual(750);
    expect(notices).toEqual([expect.stringMatching(/^rate-limited: agent "a" waits until \S+ \(the reset it reported; no attempt spent\)/)]);
  });

  it("does not call again and again an agent that keeps reporting a limit that resets now: after the first, it waits the backoff", async () => {
    const starts: number[] = [];
    const always: AgentAdapter = {
      run: async (request) => {
        starts.push(Date.now());
        return { rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "unknown", status: "rate-limited", resetsAt: new Date().toISOString() };
      },
    };
    const { ctx } = context(always, 60 * 60_000);
    const controller = new AbortController();
    const stopped = callAgent({ ...ctx, signal: controller.signal }, call(ctx, "P01")).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    controller.abort();
    await stopped;
    // The old code honoured "now" every time: hundreds of calls in 1.5 s.
    expect(starts).toHaveLength(2);
    expect(ctx.waits.until("a") - (starts[1] ?? 0)).toBeGreaterThanOrEqual(29_000);
  });

  it("ends rate-limited, for the scheduler to decide, when the reset is further off than rate_limit_wait", async () => {
    const adapter = limitedOnce(60_000);
    const { ctx, notices } = context(adapter, 1_000);
    const result = await callAgent(ctx, call(ctx, "P01"));
    expect(result.outcome.status).toBe("rate-limited");
    expect(adapter.starts).toHaveLength(1);
    expect(notices).toEqual([]);
  });
});

describe("an agent call's record", () => {
  it("counts an unknown cost at the tier's estimate (never $0), and records it and the prompt's sha256", async () => {
    const silent: AgentAdapter = { run: async (request) => ({ rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "unknown", status: "ok" }) };
    const { ctx } = context(silent, 60_000, 0.3);
    await callAgent(ctx, call(ctx, "P01"));
    expect(ctx.budget.spentUsd).toBeCloseTo(0.3, 10);
    const [started, finished] = (await readLedger(ctx.root)).events;
    // The call's start was recorded first with its reservation (the tier's estimate), and its end settles it.
    expect(started).toMatchObject({ kind: "agent-started", packet: "P01", reservedUsd: 0.3 });
    expect(finished).toMatchObject({
      kind: "agent-finished",
      call: (started as { call: string }).call,
      costSource: "unknown",
      estimatedUsd: 0.3,
      promptSha256: createHash("sha256").update("do it").digest("hex"),
    });
    const { ctx: unset } = context(silent, 60_000);
    await callAgent(unset, call(unset, "P01"));
    expect(unset.budget.spentUsd).toBe(1);
  });

  it("charges the tier's estimate for a self-reported cost that is negative or not finite, and records no such cost", async () => {
    for (const costUsd of [-100, Number.POSITIVE_INFINITY, Number.NaN]) {
      const lying: AgentAdapter = { run: async (request) => ({ rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "reported", costUsd, status: "ok" }) };
      const { ctx, notices } = context(lying, 60_000, 0.5);
      await callAgent(ctx, call(ctx, "P01"));
      expect(ctx.budget.spentUsd).toBeCloseTo(0.5, 10);
      const [, finished] = (await readLedger(ctx.root)).events;
      expect(finished).toMatchObject({ kind: "agent-finished", costSource: "unknown", estimatedUsd: 0.5 });
      expect(finished).not.toHaveProperty("costUsd");
      expect(notices).toEqual([expect.stringContaining("not a cost: recorded as suspect, and its tier's estimate is charged")]);
      expect(finished).toMatchObject({ suspectCost: String(costUsd) });
    }
    const honest: AgentAdapter = { run: async (request) => ({ rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "reported", costUsd: 0.25, status: "ok" }) };
    const { ctx: believed } = context(honest, 60_000, 0.5);
    await callAgent(believed, call(believed, "P01"));
    expect(believed.budget.spentUsd).toBe(0.25);
  });

  it("charges the tier's estimate for a cost above what one call on the tier can plausibly spend, and records it as suspect", async () => {
    for (const costUsd of [1_000_000, 1e308]) {
      const lying: AgentAdapter = { run: async (request) => ({ rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "reported", costUsd, status: "ok" }) };
      const { ctx, notices } = context(lying, 60_000, 0.5);
      await callAgent(ctx, call(ctx, "P01"));
      expect(ctx.budget.spentUsd).toBeCloseTo(0.5, 10);
      const [, finished] = (await readLedger(ctx.root)).events;
      expect(finished).toMatchObject({ kind: "agent-finished", costSource: "unknown", estimatedUsd: 0.5, suspectCost: String(costUsd) });
      expect(finished).not.toHaveProperty("costUsd");
      expect(notices).toEqual([expect.stringContaining('more than one call on tier "basic" can plausibly cost ($25, max_call_usd): recorded as suspect')]);
    }
    // Below the ceiling (25 × the estimate, at least $25) a real expensive call is believed.
    const dear: AgentAdapter = { run: async (request) => ({ rawPath: join(request.runDir, "raw"), durationMs: 1, costSource: "reported", costUsd: 24, status: "ok" }) };
    const { ctx: believed } = context(dear, 60_000, 0.5);
    await callAgent(believed, call(believed, "P01"));
    expect(believed.budget.spentUsd).toBe(24);
  });
});
