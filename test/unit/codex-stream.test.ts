import { describe, expect, it } from "vitest";
import { codexArgs } from "../../src/agents/codex.js";
import { codexCost, codexStatus, parseCodexStream } from "../../src/agents/codex-stream.js";

const agent = { name: "codex", kind: "codex" as const, bin: "codex", run: undefined, env: {}, maxTurns: undefined, args: ["-c", "x=1"], prices: { m: { input: 2, output: 8, cachedInput: 0.5 } } };
const lines = (...events: object[]) => events.map((event) => JSON.stringify(event)).join("\n");

describe("codex stream", () => {
  it("reads the thread, completed turns and usage", () => {
    const run = parseCodexStream(
      lines(
        { type: "thread.started", thread_id: "t1" },
        { type: "item.completed", item: { type: "error", message: "Model metadata not found" } },
        { type: "turn.completed", usage: { input_tokens: 1000, cached_input_tokens: 400, output_tokens: 50 } },
      ),
    );
    expect(run).toMatchObject({ threadId: "t1", completed: true, inputTokens: 1000, cachedInputTokens: 400, outputTokens: 50, turns: 1 });
    expect(codexStatus(run)).toEqual({ status: "ok" });
    expect(codexCost(agent, "m", run)).toBeCloseTo((600 * 2 + 400 * 0.5 + 50 * 8) / 1e6, 12);
  });

  it("calls turn.failed a failure, and a rate limit a rate limit", () => {
    expect(codexStatus(parseCodexStream(lines({ type: "turn.failed", error: { message: "context window exceeded" } })))).toEqual({ status: "agent-error", detail: "context window exceeded" });
    expect(codexStatus(parseCodexStream(lines({ type: "error", message: "exceeded retry limit, last status: 429 Too Many Requests" })))?.status).toBe("rate-limited");
  });

  it("calls a provider's own failure (a 5xx, unreachable) the provider's: waited out like a rate limit, never the work's", () => {
    for (const message of ["exceeded retry limit, last status: 500 Internal Server Error", "stream error: 503 Service Unavailable", "error sending request: connect ECONNREFUSED 127.0.0.1:443"]) {
      expect(codexStatus(parseCodexStream(lines({ type: "error", message })))).toEqual({ status: "rate-limited", detail: `the provider failed: ${message}` });
    }
  });

  it("ignores reconnect errors once a turn completed, and has no status without one", () => {
    expect(codexStatus(parseCodexStream(lines({ type: "error", message: "Reconnecting... 1/5" }, { type: "turn.completed", usage: {} })))).toEqual({ status: "ok" });
    expect(codexStatus(parseCodexStream(lines({ type: "thread.started", thread_id: "t" })))).toBeUndefined();
  });

  it("leaves cost unknown without a price or without usage", () => {
    const run = parseCodexStream(lines({ type: "turn.completed", usage: { input_tokens: 10, output_tokens: 1 } }));
    expect(codexCost(agent, "other-model", run)).toBeUndefined();
    expect(codexCost(agent, "m", parseCodexStream(lines({ type: "turn.completed" })))).toBeUndefined();
  });

  it("builds exec and resume command lines", () => {
    const args = codexArgs(agent, { model: "m" });
    expect(args.slice(0, 5)).toEqual(["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"]);
    expect(args.slice(-4)).toEqual(["m", "-c", "x=1", "-"]);
    expect(args.join(" ")).toContain("--disable plugins");
    expect(codexArgs(agent, { model: "m", resumeSession: "t1" }).slice(-3)).toEqual(["resume", "t1", "-"]);
  });
});
