import type { Agent } from "../config/types.js";
import { runCommand } from "../process/run.js";
import { agentSandbox, prepareCallFiles } from "./call-files.js";
import { agentEnv } from "./env.js";
import { neverStarted } from "./never-started.js";
import { agentProgram } from "./shell-program.js";
import type { AgentAdapter, AgentOutcome, AgentRequest } from "./types.js";

/**
 * Any executable as an agent (docs/reference/command-agent-protocol.md): the
 * prompt on stdin and in FACTORY_PROMPT_FILE, FACTORY_* variables, and an
 * optional JSON object on the last line of stdout with cost_usd, model,
 * session_id and rate_limited_until. It runs with the worktree as its
 * working directory.
 */
export function commandAdapter(agent: Agent): AgentAdapter {
  return {
    async run(request: AgentRequest): Promise<AgentOutcome> {
      const { promptFile, rawPath } = prepareCallFiles(request, "output.log");
      const env = agentEnv(agent, {
        FACTORY_ROLE: request.role,
        FACTORY_PACKET: request.packet,
        FACTORY_ATTEMPT: String(request.attempt),
        FACTORY_MODEL: request.model,
        FACTORY_WORKTREE: request.worktree,
        FACTORY_PROMPT_FILE: promptFile,
        FACTORY_OUTPUT: request.outputPath,
        FACTORY_ROUND: String(request.round),
        FACTORY_REPEAT: String(request.repeat ?? 0),
        ...(request.resumeSession ? { FACTORY_SESSION: request.resumeSession } : {}),
      });
      const sandbox = agentSandbox(request, { readable: [promptFile] });
      const outcome = await runCommand({
        command: agent.run ?? "false",
        cwd: request.worktree,
        env,
        input: request.prompt,
        timeoutMs: request.timeoutMs,
        idleTimeoutMs: request.idleTimeoutMs,
        logFile: rawPath,
        ...(request.signal ? { signal: request.signal } : {}),
        ...sandbox,
      });
      const base = { rawPath, durationMs: outcome.durationMs, costSource: "unknown" as const };
      switch (outcome.kind) {
        case "spawn-error":
          return { ...base, status: "crashed", detail: outcome.message };
        case "timed-out":
          return { ...base, status: "timed-out", detail: "the agent ran past agent_timeout and was killed" };
        case "stalled":
          return { ...base, status: "stalled", detail: "the agent printed nothing for agent_idle_timeout and was killed" };
        case "aborted":
          return { ...base, status: "crashed", detail: "interrupted" };
        case "signalled":
          return { ...base, status: "crashed", detail: `killed by ${outcome.signal}` };
        case "exited": {
          const report = lastJsonLine(outcome.stdout);
          const reported = {
            ...(typeof report?.cost_usd === "number" ? { costUsd: report.cost_usd, costSource: "reported" as const } : {}),
            ...(typeof report?.model === "string" ? { model: report.model } : {}),
            ...(typeof report?.session_id === "string" ? { sessionId: report.session_id } : {}),
            ...(typeof report?.turns === "number" ? { turns: report.turns } : {}),
            ...(typeof report?.input_tokens === "number" || typeof report?.output_tokens === "number"
              ? { tokens: { input: numberOr0(report?.input_tokens), output: numberOr0(report?.output_tokens), cached: numberOr0(report?.cached_input_tokens) } }
              : {}),
          };
          if (typeof report?.rate_limited_until === "string" && !Number.isNaN(Date.parse(report.rate_limited_until))) {
            return { ...base, ...reported, status: "rate-limited", detail: "the agent reports a rate limit", resetsAt: new Date(Date.parse(report.rate_limited_until)).toISOString() };
          }
          // 126 and 127 are the shell's "cannot execute" and "not found", but any program may exit with them: looked for again.
          const missing = await neverStarted(outcome, agentProgram(agent), { cwd: request.worktree, env, ...sandbox });
          if (missing) return { ...base, ...missing };
          if (outcome.code !== 0) {
            return { ...base, ...reported, status: "agent-error", detail: `exited with code ${outcome.code}: ${outcome.tail.split("\n").slice(-3).join(" | ")}` };
          }
          return { ...base, ...reported, status: "ok" };
        }
      }
    },
  };
}

function lastJsonLine(stdout: string): Record<string, unknown> | undefined {
  const line = stdout.trimEnd().split("\n").pop()?.trim();
  if (!line?.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function numberOr0(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
