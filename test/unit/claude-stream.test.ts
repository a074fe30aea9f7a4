import { describe, expect, it } from "vitest";
import { claudeArgs } from "../../src/agents/claude.js";
import { claudeStatus, modelMatches, parseClaudeStream } from "../../src/agents/claude-stream.js";

const line = (value: object) => JSON.stringify(value);
const init = line({ type: "system", subtype: "init", session_id: "s1", model: "claude-sonnet-4-5" });
const assistant = (model: string) => line({ type: "assistant", message: { model, content: [] }, session_id: "s1" });
const result = (fields: object) =>
  line({
    type: "result",
    subtype: "success",
    is_error: false,
    num_turns: 2,
    total_cost_usd: 0.25,
    session_id: "s1",
    usage: { input_tokens: 10, output_tokens: 5 },
    modelUsage: { "claude-sonnet-4-5": {} },
    permission_denials: [],
    ...fields,
  });

describe("parseClaudeStream and claudeStatus", () => {
  it("reads session, models, cost and turns; ok on a clean success", () => {
    const run = parseClaudeStream([init, assistant("claude-sonnet-4-5"), result({}), ""].join("\n"));
    expect(run).toMatchObject({ sessionId: "s1", models: ["claude-sonnet-4-5"], result: { costUsd: 0.25, turns: 2, inputTokens: 10, outputTokens: 5 } });
    expect(claudeStatus(run)).toEqual({ status: "ok" });
  });

  it("calls denied tools a failure although the result says success", () => {
    const run = parseClaudeStream(result({ permission_denials: [{ tool_name: "Bash", tool_use_id: "t", tool_input: { command: "rm -rf /" } }] }));
    expect(claudeStatus(run)).toMatchObject({ status: "permission-denied", detail: expect.stringContaining("Bash") });
  });

  it("maps max turns, is_error, budget and rate limits", () => {
    expect(claudeStatus(parseClaudeStream(result({ subtype: "error_max_turns", is_error: true })))?.status).toBe("max-turns");
    expect(claudeStatus(parseClaudeStream(result({ is_error: true, api_error_status: 400, result: "Prompt is too long" })))).toMatchObject({
      status: "agent-error",
      detail: expect.stringContaining("API 400"),
    });
    expect(claudeStatus(parseClaudeStream(result({ subtype: "error_max_budget_usd", is_error: true })))?.status).toBe("budget-exhausted");
    const retry = line({ type: "system", subtype: "api_retry", error_status: 429, retry_delay_ms: 5000 });
    const limited = claudeStatus(parseClaudeStream([retry, result({ is_error: true, api_error_status: 429 })].join("\n")), Date.parse("2026-01-01T00:00:00Z"));
    expect(limited).toEqual({ status: "rate-limited", detail: "the provider answered 429", resetsAt: "2026-01-01T00:00:05.000Z" });
  });

  it("reads a rate limit's reset from what Claude Code said, and guesses none when it said nothing", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const subscription = claudeStatus(parseClaudeStream(result({ is_error: true, result: "Claude AI usage limit reached|1767232800" })), now);
    expect(subscription).toMatchObject({ status: "rate-limited", resetsAt: "2026-01-01T02:00:00.000Z" });
    const worded = claudeStatus(parseClaudeStream(result({ is_error: true, api_error_status: 429, result: "Rate limited: please try again in 90 seconds" })), now);
    expect(worded).toMatchObject({ status: "rate-limited", resetsAt: "2026-01-01T00:01:30.000Z" });
    const silent = claudeStatus(parseClaudeStream(result({ is_error: true, api_error_status: 529, result: "Overloaded" })), now);
    expect(silent).toEqual({ status: "rate-limited", detail: "the provider answered 529" }); // no reset: the scheduler backs off from 30 s
  });

  it("has no status without a result line (a crash or a kill), and skips lines that are not JSON", () => {
    const run = parseClaudeStream([init, "Error: something broke", "{not json"].join("\n"));
    expect(run.sessionId).toBe("s1");
    expect(claudeStatus(run)).toBeUndefined();
  });

  it("records every model that answered, including a silent fallback", () => {
    const run = parseClaudeStream([init, assistant("claude-haiku-4-5"), result({})].join("\n"));
    expect(run.models).toEqual(["claude-haiku-4-5", "claude-sonnet-4-5"]);
  });
});

describe("modelMatches", () => {
  it("accepts the exact model, a dated variant and an alias; refuses another model", () => {
    expect(modelMatches("claude-sonnet-4-5", "claude-sonnet-4-5")).toBe(true);
    expect(modelMatches("claude-sonnet-4-5", "claude-sonnet-4-5-20250929")).toBe(true);
    expect(modelMatches("sonnet", "claude-sonnet-4-5")).toBe(true);
    expect(modelMatches("opus", "claude-haiku-4-5")).toBe(false);
    expect(modelMatches("claude-sonnet-4-5", "claude-haiku-4-5")).toBe(false);
  });
});

describe("claudeArgs", () => {
  const agent = { name: "claude", kind: "claude" as const, bin: "claude", run: undefined, env: {}, maxTurns: 30, args: [], prices: {} };
  it("gives the implementer edit tools and its surface's programs", () => {
    const args = claudeArgs(agent, { role: "implementer", model: "sonnet", outputRelative: ".factory/result.json", allowedCommands: ["pytest", "ruff"] });
    expect(args.slice(0, 9)).toEqual(["-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet", "--max-turns", "30", "--allowedTools"]);
    expect(args[9]).toContain("Write");
    expect(args[9]).toContain("Bash(pytest:*)");
    expect(args).not.toContain("--disallowedTools");
  });

  it("gives the reviewer read-only tools and its review file alone, and resumes for the correction round", () => {
    const args = claudeArgs(agent, { role: "reviewer", model: "opus", outputRelative: ".factory/review.json", allowedCommands: [], resumeSession: "s1" });
    expect(args).toContain("--resume");
    const allowed = args[args.indexOf("--allowedTools") + 1] ?? "";
    expect(allowed.split(",")).toEqual(["Read", "Glob", "Grep", "LS", "Edit(.factory/review.json)"]);
    expect(args[args.indexOf("--disallowedTools") + 1]).toBe("Bash,Edit,MultiEdit,NotebookEdit");
    // The planner writes under its output directory; the assessor its ruling file, like the reviewer.
    const planner = claudeArgs(agent, { role: "planner", model: "opus", outputRelative: ".factory/cut", allowedCommands: [] });
    expect(planner[planner.indexOf("--allowedTools") + 1]).toBe("Read,Glob,Grep,LS,Edit(.factory/cut/**)");
    const assessor = claudeArgs(agent, { role: "assessor", model: "opus", outputRelative: ".factory/assessment.json", allowedCommands: [] });
    expect(assessor[assessor.indexOf("--allowedTools") + 1]).toBe("Read,Glob,Grep,LS,Edit(.factory/assessment.json)");
  });
});
