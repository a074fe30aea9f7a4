import type { Agent } from "../config/types.js";
import { shellQuote } from "../gates/paths.js";
import { runCommand } from "../process/run.js";
import { agentSandbox, prepareCallFiles } from "./call-files.js";
import { codexCost, codexStatus, parseCodexStream } from "./codex-stream.js";
import { agentEnv } from "./env.js";
import { neverStarted } from "./never-started.js";
import { stoppedCall } from "./stopped.js";
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
      const outcome = await runCommand({
        command: [bin, ...codexArgs(agent, request)].map(shellQuote).join(" "),
        ...where,
        input: request.prompt,
        timeoutMs: request.timeoutMs,
        idleTimeoutMs: request.idleTimeoutMs,
        logFile: rawPath,
        ...(request.signal ? { signal: request.signal } : {}),
      });
      const base = { rawPath, durationMs: outcome.durationMs };
      const missing = await neverStarted(outcome, bin, where);
      if (missing) return { ...base, costSource: "unknown", ...missing };
      if (outcome.kind === "spawn-error") return { ...base, costSource: "unknown", status: "crashed", detail: outcome.message };
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
      if (outcome.kind !== "exited") return { ...reported, ...stoppedCall(outcome) };
      const status = codexStatus(run);
      if (!status) return { ...reported, status: "crashed", detail: `exited ${outcome.code} without a completed turn: ${outcome.tail.split("\n").slice(-2).join(" | ")}` };
      return { ...reported, status: status.status, ...(status.detail ? { detail: status.detail } : {}), ...(status.resetsAt ? { resetsAt: status.resetsAt } : {}) };
    },
  };
}
