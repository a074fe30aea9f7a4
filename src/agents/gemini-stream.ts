import { jsonLines } from "./call-files.js";
import { type AgentStatus, PROVIDER_FAILED } from "./types.js";
import { resetFromText, saysProviderFailing, saysRateLimited } from "./usage.js";

/** What a Gemini CLI `--output-format stream-json` run said about itself. */
export interface GeminiRun {
  sessionId: string | undefined;
  /** The model of the init event and every model the result's stats name. */
  models: string[];
  /** The result event: "success" or "error"; undefined when the stream has none. */
  status: string | undefined;
  error: string | undefined;
  /** Error events (a turn limit without a result, warnings the CLI raised). */
  errors: string[];
  /** Tool calls the CLI's policy refused, with their arguments. */
  denied: { tool: string; input: unknown }[];
  /** Model requests: the first assistant step and each step after tool results. */
  turns: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
}

/** Pure: reads the JSON-lines stream; lines that are not JSON (a stack trace) are skipped. */
export function parseGeminiStream(text: string): GeminiRun {
  const run: GeminiRun = { sessionId: undefined, models: [], status: undefined, error: undefined, errors: [], denied: [], turns: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  const uses = new Map<string, { tool: string; input: unknown }>();
  let stepOpen = false;
  const step = (): void => {
    if (!stepOpen) run.turns++;
    stepOpen = true;
  };
  const addModel = (model: unknown): void => {
    if (typeof model === "string" && model !== "" && !run.models.includes(model)) run.models.push(model);
  };
  for (const event of jsonLines(text)) {
    switch (event.type) {
      case "init":
        if (typeof event.session_id === "string") run.sessionId = event.session_id;
        addModel(event.model);
        break;
      case "message":
        if (event.role === "assistant") step();
        break;
      case "tool_use":
        step();
        uses.set(String(event.tool_id), { tool: String(event.tool_name ?? "?"), input: event.parameters });
        break;
      case "tool_result": {
        stepOpen = false;
        const error = (event.error ?? {}) as Record<string, unknown>;
        if (error.type === "policy_violation") run.denied.push(uses.get(String(event.tool_id)) ?? { tool: "?", input: undefined });
        break;
      }
      case "error":
        run.errors.push(String(event.message ?? "error"));
        break;
      case "result": {
        run.status = String(event.status ?? "");
        const error = (event.error ?? {}) as Record<string, unknown>;
        if (event.status !== "success") run.error = String(error.message ?? "the run failed");
        const stats = (event.stats ?? {}) as Record<string, unknown>;
        run.inputTokens = numberOr(stats.input_tokens);
        run.outputTokens = numberOr(stats.output_tokens);
        run.cachedTokens = numberOr(stats.cached);
        for (const model of Object.keys((stats.models ?? {}) as Record<string, unknown>)) addModel(model);
        break;
      }
      default:
        break;
    }
  }
  return run;
}

/**
 * Pure: the normalized status, from the stream, never from the exit code
 * alone. `stderr` is searched for the provider's own words on a rate limit
 * (the CLI's result keeps only its summary). Undefined when there is no
 * result: the process died or was killed, and the caller knows why.
 */
export function geminiStatus(run: GeminiRun, stderr: string, now = Date.now()): { status: AgentStatus; detail?: string; resetsAt?: string } | undefined {
  if (run.status === undefined) return undefined;
  if (run.status !== "success") {
    const detail = (run.error ?? "").replace(/\s+/g, " ").trim().slice(0, 300);
    if (/max session turns/i.test(detail)) return { status: "max-turns", detail };
    if (saysRateLimited(detail)) {
      const resetsAt = resetFromText(`${detail}\n${stderr}`, now);
      return { status: "rate-limited", detail, ...(resetsAt ? { resetsAt } : {}) };
    }
    if (saysProviderFailing(detail)) return { status: "rate-limited", detail: `${PROVIDER_FAILED}: ${detail}` };
    return { status: "agent-error", detail };
  }
  const turnLimit = run.errors.find((error) => /session turns/i.test(error));
  if (turnLimit) return { status: "max-turns", detail: turnLimit };
  if (run.denied.length > 0) {
    const denied = run.denied.map((denial) => `${denial.tool} ${JSON.stringify(denial.input).slice(0, 120)}`);
    return { status: "permission-denied", detail: `denied: ${denied.join("; ")}` };
  }
  return { status: "ok" };
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
