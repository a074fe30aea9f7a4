import type { Agent } from "../config/types.js";
import { jsonLines } from "./call-files.js";
import { type AgentStatus, PROVIDER_FAILED } from "./types.js";
import { resetFromText, saysProviderFailing, saysRateLimited, tokenCost } from "./usage.js";

/** What a `codex exec --json` run said about itself. */
export interface CodexRun {
  threadId: string | undefined;
  completed: boolean;
  failure: string | undefined;
  /** Transient errors Codex reported while it retried (reconnects, rate limits). */
  errors: string[];
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  turns: number;
}

/** Pure: reads the JSONL event stream; lines that are not JSON are skipped. */
export function parseCodexStream(text: string): CodexRun {
  const run: CodexRun = { threadId: undefined, completed: false, failure: undefined, errors: [], inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, turns: 0 };
  for (const event of jsonLines(text)) {
    switch (event.type) {
      case "thread.started":
        if (typeof event.thread_id === "string") run.threadId = event.thread_id;
        break;
      case "turn.completed": {
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        run.completed = true;
        run.turns++;
        run.inputTokens += numberOr(usage.input_tokens);
        run.cachedInputTokens += numberOr(usage.cached_input_tokens);
        run.outputTokens += numberOr(usage.output_tokens);
        break;
      }
      case "turn.failed":
        run.failure = String(((event.error ?? {}) as Record<string, unknown>).message ?? "the turn failed");
        break;
      case "error":
        run.errors.push(String(event.message ?? "error"));
        break;
      default:
        break;
    }
  }
  return run;
}

/**
 * Pure: the normalized status. `turn.failed` and a stream that ends in an
 * error without a completed turn are failures even at exit 0.
 */
export function codexStatus(run: CodexRun, now = Date.now()): { status: AgentStatus; detail?: string; resetsAt?: string } | undefined {
  const failure = run.failure ?? (!run.completed ? run.errors.at(-1) : undefined);
  if (failure) {
    if (saysRateLimited(failure)) {
      const resetsAt = resetFromText(failure, now);
      return { status: "rate-limited", detail: failure, ...(resetsAt ? { resetsAt } : {}) };
    }
    if (saysProviderFailing(failure)) return { status: "rate-limited", detail: `${PROVIDER_FAILED}: ${failure}` };
    return { status: "agent-error", detail: failure };
  }
  if (!run.completed) return undefined;
  return { status: "ok" };
}

/** Pure: cost from tokens and the agent's price table; undefined (unknown) without usage or a price. */
export function codexCost(agent: Agent, model: string, run: CodexRun): number | undefined {
  return tokenCost(agent, model, { input: run.inputTokens, output: run.outputTokens, cached: run.cachedInputTokens });
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
