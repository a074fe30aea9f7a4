import type { Agent } from "../config/types.js";

/** Tokens one call used, as its CLI reported them; `cached` is the part of `input` read from the provider's cache. */
export interface TokenUsage {
  input: number;
  output: number;
  cached: number;
}

/** Pure: the cost of a call from its tokens and the agent's price table (USD per million); undefined (unknown) without usage or a price. */
export function tokenCost(agent: Agent, model: string, usage: TokenUsage): number | undefined {
  const price = agent.prices[model];
  if (!price || usage.input + usage.output === 0) return undefined;
  const cached = Math.min(usage.cached, usage.input);
  const input = (usage.input - cached) * price.input + cached * (price.cachedInput ?? price.input);
  return (input + usage.output * price.output) / 1_000_000;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hour: 3_600_000 };

/** Pure: the reset time a provider's message gives ("try again in 6.5s", "Please retry in 37.5s", "retry after 2 minutes"), if any. */
export function resetFromText(text: string, now: number): string | undefined {
  const match = /(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)\b/i.exec(text);
  if (!match) return undefined;
  const unit = (match[2] ?? "s").toLowerCase().replace(/s$/, "") || "s";
  const ms = UNIT_MS[unit] ?? UNIT_MS[`${unit}s`] ?? 1000;
  return new Date(now + Math.round(Number(match[1]) * ms)).toISOString();
}

/** Pure: whether a provider's error text says the caller is being rate-limited or is out of quota. */
export function saysRateLimited(text: string): boolean {
  return /rate.?limit|\b429\b|usage limit|too many requests|quota|RESOURCE_EXHAUSTED/i.test(text);
}

/**
 * Pure: whether a CLI's failure says the provider itself failed (a 5xx, overloaded, unreachable): the
 * provider's, not the work's, so it is waited out like a rate limit (no attempt spent, backing off).
 */
export function saysProviderFailing(text: string): boolean {
  return /\b(500|502|503|504|529)\b|internal server error|server[- ]side (issue|error)|overloaded|service unavailable|bad gateway|gateway time-?out|ECONNREFUSED|ECONNRESET|\bUNAVAILABLE\b/i.test(
    text,
  );
}
