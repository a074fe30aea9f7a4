import type { Agent } from "../config/types.js";
import { agentSandbox, prepareCallFiles } from "./call-files.js";
import { callAgentCli, callEnd } from "./cli-call.js";
import { codexCost, codexStatus, parseCodexStream } from "./codex-stream.js";
import { agentEnv } from "./env.js";
import type { AgentAdapter, AgentOutcome, AgentRequest } from "./types.js";
import { cliVersion } from "./version.js";

/**
 * Codex's own traffic a factory run never needs: it would otherwise fetch a
 * plugin marketplace from GitHub and check for updates on every run.
 */
const QUIET = ["plugins", "remote_plugin", "plugin_sharing", "apps", "in_app_updates"].flatMap((feature) => ["--disable", feature]);

/** What Codex needs from HOME inside the sandbox: its login and config, copied into the private HOME. */
const HOME_SEED = [".codex/auth.json", ".codex/config.toml"];

/**
 * Pure: `codex exec --json`, prompt on stdin. Both roles need to write one
 * file (result or review), so both may write the workspace; a reviewer that
 * changes anything else has its verdict discarded by the factory. Inside the
 * factory's sandbox, Codex's own sandbox is off: the factory's already holds
 * it to the worktree, and Codex cannot build a second one inside it.
 */
export function codexArgs(agent: Agent, request: Pick<AgentRequest, "model" | "resumeSession" | "sandbox">): string[] {
  const mode = request.sandbox ? "danger-full-access" : "workspace-write";
  const args = ["exec", "--json", "--skip-git-repo-check", "--sandbox", mode, ...QUIET, "-m", request.model, ...agent.args];
  if (request.resumeSession) args.push("resume", request.resumeSession);
  return [...args, "-"];
}

export function codexAdapter(agent: Agent): AgentAdapter {
  const bin = agent.bin ?? "codex";
  return {
    version: () => cliVersion(bin, agent),
    async run(request: AgentRequest): Promise<AgentOutcome> {
      const { rawPath } = prepareCallFiles(request, "events.jsonl");
      const where = { cwd: request.worktree, env: agentEnv(agent), ...agentSandbox(request, { homeSeed: HOME_SEED }) };
      return callAgentCli(request, {
        bin,
        args: codexArgs(agent, request),
        where,
        rawPath,
        read: (outcome, base) => {
          const run = parseCodexStream(outcome.stdout);
          const cost = codexCost(agent, request.model, run);
          const reported = {
            ...base,
            ...(run.threadId ? { sessionId: run.threadId } : {}),
            ...(cost !== undefined ? { costUsd: cost, costSource: "computed" as const } : { costSource: "unknown" as const }),
            model: request.model, // codex exec --json does not say which model answered
            turns: run.turns,
            tokens: { input: run.inputTokens, output: run.outputTokens, cached: run.cachedInputTokens },
          };
          return { ...reported, ...callEnd(outcome, codexStatus(run), undefined, "a completed turn") };
        },
      });
    },
  };
}
