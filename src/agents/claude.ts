import type { Agent } from "../config/types.js";
import { shellQuote } from "../gates/paths.js";
import { type RunOutcome, runCommand } from "../process/run.js";
import { agentSandbox, prepareCallFiles } from "./call-files.js";
import { claudeStatus, modelMatches, parseClaudeStream } from "./claude-stream.js";
import { type CallBase, callAgentCli, callEnd, type RanOutcome, readCall } from "./cli-call.js";
import { agentEnv } from "./env.js";
import type { AgentAdapter, AgentOutcome, AgentRequest, ProbeResult } from "./types.js";
import { cliVersion } from "./version.js";

const READ_TOOLS = ["Read", "Glob", "Grep", "LS"];
const EDIT_TOOLS = ["Edit", "MultiEdit", "Write", "NotebookEdit"];
/** Claude Code's own traffic that a factory run never needs. */
/** What Claude Code needs from HOME inside the sandbox: its login and settings, copied into the private HOME. */
const HOME_SEED = [".claude.json", ".claude/.credentials.json", ".claude/settings.json"];
const QUIET = { DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1", DISABLE_ERROR_REPORTING: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" };

/** Pure: the command line for one role. Edit(path) rules also admit the Write tool to that path. */
export function claudeArgs(agent: Agent, request: Pick<AgentRequest, "role" | "model" | "outputRelative" | "allowedCommands" | "resumeSession">): string[] {
  const args = ["-p", "--output-format", "stream-json", "--verbose", "--model", request.model];
  if (agent.maxTurns) args.push("--max-turns", String(agent.maxTurns));
  if (request.resumeSession) args.push("--resume", request.resumeSession);
  if (request.role === "implementer") {
    const shell = request.allowedCommands.map((command) => `Bash(${command}:*)`);
    args.push("--allowedTools", [...READ_TOOLS, ...EDIT_TOOLS, `Edit(${request.outputRelative})`, ...shell].join(","));
  } else {
    // The planner's output is a directory: anything under it.
    const output = request.role === "planner" ? `${request.outputRelative}/**` : request.outputRelative;
    args.push("--allowedTools", [...READ_TOOLS, `Edit(${output})`].join(","));
    args.push("--disallowedTools", ["Bash", ...EDIT_TOOLS.filter((tool) => tool !== "Write")].join(","));
  }
  return [...args, ...agent.args];
}

/** Claude Code as an agent: `claude -p --output-format stream-json --verbose`, the prompt on stdin. */
export function claudeAdapter(agent: Agent): AgentAdapter {
  const bin = agent.bin ?? "claude";
  return {
    async run(request: AgentRequest): Promise<AgentOutcome> {
      const { rawPath } = prepareCallFiles(request, "stream.jsonl");
      const where = { cwd: request.worktree, env: agentEnv(agent, QUIET), ...agentSandbox(request, { homeSeed: HOME_SEED }) };
      return callAgentCli(request, { bin, args: claudeArgs(agent, request), where, rawPath, read: (outcome, base) => readClaude(outcome, request.model, base) });
    },
    version: () => cliVersion(bin, agent),
    async probe(input): Promise<ProbeResult> {
      const args = ["-p", "--output-format", "stream-json", "--verbose", "--model", input.model, "--max-turns", "1", "--disallowedTools", [...EDIT_TOOLS, "Bash"].join(",")];
      const outcome = await runCommand({
        command: [bin, ...args].map(shellQuote).join(" "),
        cwd: input.cwd,
        env: agentEnv(agent, QUIET),
        input: "Reply with the single word: ready",
        timeoutMs: input.timeoutMs,
        logFile: input.logFile,
      });
      const result = toOutcome(outcome, input.model, input.logFile);
      if (result.status !== "ok" && result.status !== "agent-error") return { ok: false, reason: `${result.status}: ${result.detail ?? ""}` };
      const run = parseClaudeStream("stdout" in outcome ? outcome.stdout : "");
      // "<synthetic>": Claude Code answered by itself, no model was asked (not logged in, no credit): its own words say why.
      if (run.models.includes("<synthetic>")) return { ok: false, reason: `Claude Code answered by itself, without asking a model: ${JSON.stringify(run.result?.text ?? "")}` };
      if (run.models.length === 0) return { ok: false, reason: result.detail ?? "it did not say which model answered" };
      return { ok: true, models: run.models, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) };
    },
  };
}

function toOutcome(outcome: RunOutcome, configured: string, rawPath: string): AgentOutcome {
  return readCall(outcome, rawPath, (ran, base) => readClaude(ran, configured, base));
}

/** Pure: what a Claude Code call that ran said: its usage as it reported it, and how it ended (with the API retries it waited out). */
function readClaude(outcome: RanOutcome, configured: string, base: CallBase): AgentOutcome {
  const run = parseClaudeStream(outcome.stdout);
  const reported = {
    ...base,
    costSource: "unknown" as "unknown" | "reported",
    ...(run.sessionId ? { sessionId: run.sessionId } : {}),
    ...(run.models.length ? { model: run.models.join(",") } : {}),
    ...(run.result?.costUsd !== undefined ? { costUsd: run.result.costUsd, costSource: "reported" as const } : {}),
    ...(run.result?.turns !== undefined ? { turns: run.result.turns } : {}),
    ...(run.result?.inputTokens !== undefined || run.result?.outputTokens !== undefined
      ? { tokens: { input: run.result?.inputTokens ?? 0, output: run.result?.outputTokens ?? 0, cached: run.result?.cachedTokens ?? 0 } }
      : {}),
  };
  const status = outcome.kind === "exited" ? claudeStatus(run) : undefined;
  const end = callEnd(outcome, status, { ran: run.models, configured, matches: modelMatches });
  if (!status || end.status !== status.status) return { ...reported, ...end };
  const waited = run.retries.reduce((sum, retry) => sum + retry.delayMs, 0);
  const retries = run.retries.length ? `; Claude Code retried the API ${run.retries.length}x (${run.retries.map((r) => r.status ?? "?").join(",")}), waiting ${Math.round(waited / 1000)}s` : "";
  return { ...reported, ...end, ...(status.detail || retries ? { detail: `${status.detail ?? "ok"}${retries}` } : {}) };
}
