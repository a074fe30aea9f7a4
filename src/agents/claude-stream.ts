import { jsonLines } from "./call-files.js";
import { type AgentStatus, PROVIDER_FAILED } from "./types.js";
import { resetFromText } from "./usage.js";

/** What a Claude Code `--output-format stream-json --verbose` run said about itself. */
export interface ClaudeRun {
  sessionId: string | undefined;
  /** Every model that answered: the init model, assistant messages' models and modelUsage keys. */
  models: string[];
  result: ClaudeResult | undefined;
  permissionDenials: { tool: string; input: unknown }[];
  /** API retries Claude Code did itself (rate limits, overload), with the delays it waited. */
  retries: { status: number | undefined; delayMs: number }[];
}

export interface ClaudeResult {
  subtype: string;
  isError: boolean;
  text: string | undefined;
  costUsd: number | undefined;
  turns: number | undefined;
  apiErrorStatus: number | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  cachedTokens: number | undefined;
}

/** Pure: reads the NDJSON stream; lines that are not JSON (a crash's stack trace) are skipped. */
export function parseClaudeStream(text: string): ClaudeRun {
  const run: ClaudeRun = { sessionId: undefined, models: [], result: undefined, permissionDenials: [], retries: [] };
  const addModel = (model: unknown): void => {
    if (typeof model === "string" && model !== "" && !run.models.includes(model)) run.models.push(model);
  };
  for (const event of jsonLines(text)) {
    if (typeof event.session_id === "string") run.sessionId = event.session_id;
    if (event.type === "system" && event.subtype === "api_retry") {
      run.retries.push({ status: numberOr(event.error_status), delayMs: numberOr(event.retry_delay_ms) ?? 0 });
    }
    if (event.type === "assistant") addModel((event.message as Record<string, unknown> | undefined)?.model);
    if (event.type === "result") {
      const usage = (event.usage ?? {}) as Record<string, unknown>;
      for (const model of Object.keys((event.modelUsage ?? {}) as Record<string, unknown>)) addModel(model);
      const denials = Array.isArray(event.permission_denials) ? event.permission_denials : [];
      run.permissionDenials = denials.map((denial: Record<string, unknown>) => ({ tool: String(denial.tool_name ?? "?"), input: denial.tool_input }));
      run.result = {
        subtype: String(event.subtype ?? ""),
        isError: event.is_error === true,
        text: typeof event.result === "string" ? event.result : undefined,
        costUsd: numberOr(event.total_cost_usd),
        turns: numberOr(event.num_turns),
        apiErrorStatus: numberOr(event.api_error_status),
        inputTokens: numberOr(usage.input_tokens),
        outputTokens: numberOr(usage.output_tokens),
        cachedTokens: numberOr(usage.cache_read_input_tokens),
      };
    }
  }
  return run;
}

/**
 * Pure: the normalized status, from the stream, never from the exit code
 * alone (Claude Code exits 0 after denied tools). Undefined when the stream
 * has no result (the process died or was killed: the caller knows why).
 */
export function claudeStatus(run: ClaudeRun, now = Date.now()): { status: AgentStatus; detail?: string; resetsAt?: string } | undefined {
  const result = run.result;
  if (!result) return undefined;
  if (result.subtype === "error_max_turns") return { status: "max-turns", detail: `stopped at --max-turns after ${result.turns ?? "?"} turns` };
  if (result.subtype.startsWith("error_max_budget")) return { status: "budget-exhausted", detail: "stopped at its budget" };
  const usageLimit = /usage limit reached\|(\d{9,11})\b/i.exec(result.text ?? "");
  if (usageLimit) {
    return { status: "rate-limited", detail: "the subscription's usage limit was reached", resetsAt: new Date(Number(usageLimit[1]) * 1000).toISOString() };
  }
  if (result.apiErrorStatus === 429 || result.apiErrorStatus === 529) {
    const resetsAt = claudeReset(run, result.text ?? "", now);
    return { status: "rate-limited", detail: `the provider answered ${result.apiErrorStatus}`, ...(resetsAt ? { resetsAt } : {}) };
  }
  if ((result.apiErrorStatus ?? 0) >= 500) {
    // The provider failed (Claude Code retried and gave up): its outage, not the work's; backed off like a rate limit.
    return { status: "rate-limited", detail: `${PROVIDER_FAILED} (API ${result.apiErrorStatus}), a server-side error: ${(result.text ?? "").slice(0, 200)}` };
  }
  if (result.isError || result.subtype.startsWith("error")) {
    return { status: "agent-error", detail: `${result.subtype}${result.apiErrorStatus ? ` (API ${result.apiErrorStatus})` : ""}: ${(result.text ?? "").slice(0, 300)}` };
  }
  if (run.permissionDenials.length > 0) {
    const denied = run.permissionDenials.map((denial) => `${denial.tool} ${JSON.stringify(denial.input).slice(0, 120)}`);
    return { status: "permission-denied", detail: `denied: ${denied.join("; ")}` };
  }
  return { status: "ok" };
}

/**
 * Pure: when a rate limit Claude Code gave up on resets, as the provider said
 * it: the delay of Claude Code's last retry (taken from the API's retry-after),
 * else "try again in …" in the error text. Undefined when nothing said, so
 * the scheduler backs off instead of trusting a guess.
 */
function claudeReset(run: ClaudeRun, text: string, now: number): string | undefined {
  const delay = run.retries.at(-1)?.delayMs;
  if (delay !== undefined) return new Date(now + Math.max(delay, 1_000)).toISOString();
  return resetFromText(text, now);
}

/** Whether the model that ran is the configured one: equal, or the configured alias names it ("sonnet" → "claude-sonnet-4-5"). */
export function modelMatches(configured: string, actual: string): boolean {
  if (actual === configured || actual.startsWith(`${configured}-`) || actual.startsWith(`${configured}@`)) return true;
  return actual.split(/[-_.@/]/).includes(configured);
}

function numberOr(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
