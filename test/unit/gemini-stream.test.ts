import { describe, expect, it } from "vitest";
import { geminiPolicy } from "../../src/agents/gemini.js";
import { geminiStatus, parseGeminiStream } from "../../src/agents/gemini-stream.js";

const lines = (...events: object[]) => events.map((event) => JSON.stringify(event)).join("\n");
const now = Date.parse("2026-11-30T20:00:00Z");
const stats = { input_tokens: 3000, output_tokens: 300, cached: 600, models: { "gemini-2.5-pro": {} } };

describe("the Gemini CLI's stream", () => {
  it("reads the session, tokens, models and one turn per model request", () => {
    const run = parseGeminiStream(
      lines(
        { type: "init", session_id: "s-1", model: "gemini-2.5-pro" },
        { type: "tool_use", tool_name: "write_file", tool_id: "t1", parameters: {} },
        { type: "tool_use", tool_name: "read_file", tool_id: "t2", parameters: {} },
        { type: "tool_result", tool_id: "t1", status: "success" },
        { type: "tool_result", tool_id: "t2", status: "success" },
        { type: "message", role: "assistant", content: "Do", delta: true },
        { type: "message", role: "assistant", content: "ne.", delta: true },
        { type: "result", status: "success", stats },
      ),
    );
    expect(run).toMatchObject({ sessionId: "s-1", models: ["gemini-2.5-pro"], turns: 2, inputTokens: 3000, outputTokens: 300, cachedTokens: 600 });
    expect(geminiStatus(run, "", now)).toEqual({ status: "ok" });
  });

  it("a tool the policy refused is a denial, even when the run ends in success", () => {
    const run = parseGeminiStream(
      lines(
        { type: "tool_use", tool_name: "run_shell_command", tool_id: "t1", parameters: { command: "curl x" } },
        { type: "tool_result", tool_id: "t1", status: "error", error: { type: "policy_violation", message: "Tool execution denied by policy." } },
        { type: "result", status: "success", stats },
      ),
    );
    expect(geminiStatus(run, "", now)).toEqual({ status: "permission-denied", detail: 'denied: run_shell_command {"command":"curl x"}' });
  });

  it("a quota error is a rate limit, with the reset the provider's message gave (on stderr)", () => {
    const run = parseGeminiStream(lines({ type: "result", status: "error", error: { type: "unknown", message: "[API Error: You have exhausted your daily quota on this model.]" }, stats }));
    expect(geminiStatus(run, "cause: { code: 429, message: 'You exceeded your current quota. Please retry in 37.5s.' }", now)).toEqual({
      status: "rate-limited",
      detail: "[API Error: You have exhausted your daily quota on this model.]",
      resetsAt: new Date(now + 37_500).toISOString(),
    });
    expect(geminiStatus(run, "", now)).toEqual({ status: "rate-limited", detail: "[API Error: You have exhausted your daily quota on this model.]" });
  });

  it("a provider's own failure (a 5xx, overloaded) is the provider's: waited out like a rate limit", () => {
    const down = parseGeminiStream(lines({ type: "result", status: "error", error: { message: "[API Error: got status: 503 Service Unavailable. The model is overloaded.]" } }));
    expect(geminiStatus(down, "", now)).toEqual({ status: "rate-limited", detail: "the provider failed: [API Error: got status: 503 Service Unavailable. The model is overloaded.]" });
  });

  it("other errors are agent errors; a turn limit is its own outcome; no result is a crash for the caller to name", () => {
    const failed = parseGeminiStream(lines({ type: "result", status: "error", error: { message: "[API Error: request too large]" } }));
    expect(geminiStatus(failed, "", now)).toEqual({ status: "agent-error", detail: "[API Error: request too large]" });
    const turns = parseGeminiStream(lines({ type: "result", status: "error", error: { type: "FatalTurnLimitedError", message: "Reached max session turns for this session." } }));
    expect(geminiStatus(turns, "", now)).toMatchObject({ status: "max-turns" });
    expect(geminiStatus(parseGeminiStream("TypeError: boom"), "", now)).toBeUndefined();
  });
});

describe("the policy the factory gives the Gemini CLI", () => {
  it("lets the implementer read, edit and run its surface's programs; the reviewer read and write only its review file", () => {
    const implementer = geminiPolicy({ role: "implementer", outputRelative: ".factory/result.json", allowedCommands: ["node", "npm"], worktree: "/w" });
    expect(implementer).toContain('toolName = ["read_file","read_many_files","list_directory","glob","grep_search","search_file_content","write_file","replace"]');
    expect(implementer).toContain('toolName = "run_shell_command"\ncommandPrefix = ["node","npm"]');
    const reviewer = geminiPolicy({ role: "reviewer", outputRelative: ".factory/review.json", allowedCommands: ["node"], worktree: "/w" });
    expect(reviewer).not.toContain("run_shell_command");
    expect(reviewer).not.toContain("replace");
    expect(reviewer).toContain(String.raw`argsPattern = "\"file_path\":\"\\.factory/review\\.json\""`);
    expect(reviewer).toContain(String.raw`argsPattern = "\"file_path\":\"/w/\\.factory/review\\.json\""`);
    // The planner writes anything under its output directory, and nothing beside it.
    const planner = geminiPolicy({ role: "planner", outputRelative: ".factory/cut", allowedCommands: [], worktree: "/w" });
    expect(planner).toContain(String.raw`argsPattern = "\"file_path\":\"\\.factory/cut/"`);
    expect(planner).not.toContain("replace");
  });
});
