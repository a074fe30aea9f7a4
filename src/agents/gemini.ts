import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Agent } from "../config/types.js";
import { shellQuote } from "../gates/paths.js";
import { type RunOutcome, runCommand } from "../process/run.js";
import { agentSandbox, prepareCallFiles } from "./call-files.js";
import { modelMatches } from "./claude-stream.js";
import { type CallBase, callAgentCli, callEnd, type RanOutcome, readCall } from "./cli-call.js";
import { agentEnv } from "./env.js";
import { geminiStatus, parseGeminiStream } from "./gemini-stream.js";
import type { AgentAdapter, AgentOutcome, AgentRequest, ProbeResult } from "./types.js";
import { tokenCost } from "./usage.js";
import { cliVersion } from "./version.js";

const READ_TOOLS = ["read_file", "read_many_files", "list_directory", "glob", "grep_search", "search_file_content"];
const EDIT_TOOLS = ["write_file", "replace"];
/** What the Gemini CLI needs from HOME inside the sandbox: its settings (the auth method), login and keys. */
const HOME_SEED = [".gemini/settings.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/.env"];
/**
 * The Gemini CLI starts a second node process of itself at every call, only
 * to give it a larger heap (half the machine's memory); run headless, it
 * needs no such heap, and the relaunch doubled each call's start (1.5 s to
 * 3.2 s here). The agent's `env` can set GEMINI_CLI_NO_RELAUNCH = "" to have
 * it back.
 */
const NO_RELAUNCH = { GEMINI_CLI_NO_RELAUNCH: "true" };

/** The CLI's own traffic and prompts a factory run never needs; system settings, so they win over the user's. */
const QUIET_SETTINGS = { general: { disableAutoUpdate: true, disableUpdateNag: true }, privacy: { usageStatisticsEnabled: false } };

/**
 * Pure: the policy-engine rules for one role (TOML). Everything not allowed
 * here needs a confirmation, which a headless run never gets: the call is
 * refused and the refusal shows in the stream. The implementer may read, edit
 * and run the surface's programs; the reviewer may read and write its review
 * file only.
 */
export function geminiPolicy(request: Pick<AgentRequest, "role" | "outputRelative" | "allowedCommands" | "worktree">): string {
  const rule = (fields: Record<string, string | string[]>): string =>
    ["[[rule]]", ...Object.entries(fields).map(([key, value]) => `${key} = ${JSON.stringify(value)}`), 'decision = "allow"', "priority = 100", ""].join("\n");
  if (request.role === "implementer") {
    return [rule({ toolName: [...READ_TOOLS, ...EDIT_TOOLS] }), ...(request.allowedCommands.length ? [rule({ toolName: "run_shell_command", commandPrefix: [...request.allowedCommands] })] : [])].join(
      "\n",
    );
  }
  // The review file by its relative or absolute path, spelled out: the CLI refuses patterns with open-ended repetition.
  // The planner's output is a directory: a path that starts with it (the pattern is not anchored at its end).
  const paths = [request.outputRelative, join(request.worktree, request.outputRelative)];
  const quoted = (path: string): string => (request.role === "planner" ? JSON.stringify(`${path}/`).slice(0, -1) : JSON.stringify(path));
  return [rule({ toolName: READ_TOOLS }), ...paths.map((path) => rule({ toolName: "write_file", argsPattern: `"file_path":${quoted(path).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}` }))].join("\n");
}

/** Pure: the command line; the prompt goes on stdin (`-p ""` makes the run headless and appends nothing). */
export function geminiArgs(agent: Agent, request: Pick<AgentRequest, "model" | "resumeSession">, policyFile: string): string[] {
  const args = ["-p", "", "--output-format", "stream-json", "--skip-trust", "--approval-mode", "default", "--policy", policyFile, "-m", request.model];
  if (request.resumeSession) args.push("--resume", request.resumeSession);
  return [...args, ...agent.args];
}

/** Gemini CLI as an agent: headless stream-json, tools limited by a policy file written for the call. */
export function geminiAdapter(agent: Agent): AgentAdapter {
  const bin = agent.bin ?? "gemini";
  return {
    version: () => cliVersion(bin, agent, NO_RELAUNCH),
    async run(request: AgentRequest): Promise<AgentOutcome> {
      const { promptFile, rawPath } = prepareCallFiles(request, "stream.jsonl");
      const stem = promptFile.replace(/-prompt\.md$/, "");
      const policyFile = `${stem}-policy.toml`;
      const settingsFile = `${stem}-settings.json`;
      writeFileSync(policyFile, geminiPolicy(request));
      writeFileSync(settingsFile, JSON.stringify({ ...QUIET_SETTINGS, ...(agent.maxTurns ? { model: { maxSessionTurns: agent.maxTurns } } : {}) }));
      const where = {
        cwd: request.worktree,
        env: { ...NO_RELAUNCH, ...agentEnv(agent, { GEMINI_CLI_SYSTEM_SETTINGS_PATH: settingsFile }) },
        ...agentSandbox(request, { homeSeed: HOME_SEED, readable: [policyFile, settingsFile] }),
      };
      return callAgentCli(request, { bin, args: geminiArgs(agent, request, policyFile), where, rawPath, read: (outcome, base) => readGemini(agent, outcome, request.model, base) });
    },
    async probe(input): Promise<ProbeResult> {
      const policyFile = join(input.logFile.replace(/[^/]*$/, ""), "gemini-probe-policy.toml");
      writeFileSync(policyFile, "");
      const outcome = await runCommand({
        command: [bin, ...geminiArgs(agent, { model: input.model }, policyFile)].map(shellQuote).join(" "),
        cwd: input.cwd,
        env: { ...NO_RELAUNCH, ...agentEnv(agent) },
        input: "Reply with the single word: ready",
        timeoutMs: input.timeoutMs,
        logFile: input.logFile,
      });
      const result = toOutcome(agent, outcome, input.model, input.logFile);
      if (result.status !== "ok" && result.status !== "agent-error") return { ok: false, reason: `${result.status}: ${result.detail ?? ""}` };
      const run = parseGeminiStream("stdout" in outcome ? outcome.stdout : "");
      if (run.models.length === 0) return { ok: false, reason: result.detail ?? "it did not say which model answered" };
      return { ok: true, models: run.models, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) };
    },
  };
}

function toOutcome(agent: Agent, outcome: RunOutcome, configured: string, rawPath: string): AgentOutcome {
  return readCall(outcome, rawPath, (ran, base) => readGemini(agent, ran, configured, base));
}

/** Pure: what a Gemini CLI call that ran said: its usage from the stream, and how it ended. */
function readGemini(agent: Agent, outcome: RanOutcome, configured: string, base: CallBase): AgentOutcome {
  const run = parseGeminiStream(outcome.stdout);
  const tokens = { input: run.inputTokens, output: run.outputTokens, cached: run.cachedTokens };
  const cost = tokenCost(agent, configured, tokens);
  const reported = {
    ...base,
    ...(run.sessionId ? { sessionId: run.sessionId } : {}),
    ...(cost !== undefined ? { costUsd: cost, costSource: "computed" as const } : { costSource: "unknown" as const }),
    ...(run.models.length ? { model: run.models.join(",") } : {}),
    turns: run.turns,
    tokens,
  };
  const policyError = outcome.kind === "exited" ? /Policy file error[^\n]*\n[^\n]*/.exec(outcome.stderr) : null;
  if (policyError) return { ...reported, status: "agent-error", detail: `the CLI refused the factory's tool policy: ${policyError[0].replace(/\s+/g, " ")}` };
  return { ...reported, ...callEnd(outcome, geminiStatus(run, outcome.stderr), { ran: run.models, configured, matches: modelMatches }) };
}
