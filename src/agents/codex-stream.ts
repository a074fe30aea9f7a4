import type { Agent } from "../config/types.js";
import { jsonLines } from "./call-files.js";
import type { AgentStatus } from "./types.js";

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
    if (/rate.?limit|429|usage limit|too many requests/i.test(failure)) {
      const resetsAt = resetFromText(failure, now);
      return { status: "rate-limited", detail: failure, ...(resetsAt ? { resetsAt } : {}) };
    }
    return { status: "agent-error", detail: failure };
  }
  if (!run.completed) return undefined;
  return { status: "ok" };
}

/** Pure: cost from tokens and the agent's price table; undefined (unknown) without usage or a price. */
export function codexCost(agent: Agent, model: string, run: CodexRun): number | undefined {
  const price = agent.prices[model];
  if (!price || run.inputTokens + run.outputTokens === 0) return undefined;
  const cached = Math.min(run.cachedInputTokens, run.inputTokens);
  const input = (run.inputTokens - cached) * price.input + cached * (price.cachedInput ?? price.input);
  return (input + run.outputTokens * price.output) / 1_000_000;
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hour: 3_600_000 };

/** Pure: the reset time a provider's message gives ("try again in 6.5s", "retry after 2 minutes"), if any. */
export function resetFromText(text: string, now: number): string | undefined {
  const match = /(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)\b/i.exec(text);
  if (!match) return undefined;
  const unit = (match[2] ?? "s").toLowerCase().replace(/s$/, "") || "s";
  const ms = UNIT_MS[unit] ?? UNIT_MS[`${unit}s`] ?? 1000;
  return new Date(now + Math.round(Number(match[1]) * ms)).toISOString();
}
