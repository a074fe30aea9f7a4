/**
 * Rate limits are the provider's, so they belong to an agent, not a packet:
 * while one agent waits, every packet that would call it waits too, and no
 * packet is re-claimed before its wait is over. No attempt is spent.
 */
export const FIRST_BACKOFF_MS = 30_000;

/** `beyond`: the reset is further away than rate_limit_wait: not waited out in this run (its packets wait for the next). */
export type Wait = { until: number; beyond?: true } | { halt: string };

/** How many limits in a row an agent may report before its reports are no longer waited out. */
export const DEFAULT_MAX_WAITS = 8;

/**
 * Pure: how long to wait after a rate limit. A reset the provider or CLI
 * gave is honoured (further away than `maxWaitMs`: `beyond`, the agent's
 * packets wait for a later run and the rest of the queue goes on), but from the second limit in a row it is never shorter than the
 * backoff: an agent that keeps reporting "resets now" is not called again and
 * again. Without a reset, back off exponentially from 30 s, doubling with
 * each limit in a row, capped by `maxWaitMs`.
 */
export function rateLimitWait(input: { resetsAt: string | undefined; strikes: number; now: number; maxWaitMs: number; agent: string }): Wait {
  const backoff = (strikes: number): number => Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, strikes - 1), input.maxWaitMs);
  const reset = input.resetsAt === undefined ? Number.NaN : Date.parse(input.resetsAt);
  if (!Number.isNaN(reset)) {
    if (reset - input.now > input.maxWaitMs) return { until: reset, beyond: true };
    const floor = input.strikes > 1 ? backoff(input.strikes - 1) : 0;
    return { until: Math.max(reset, input.now + floor) };
  }
  return { until: input.now + backoff(input.strikes) };
}

/** Which agents wait, until when, and how many limits each hit in a row. */
export class AgentWaits {
  private readonly ends = new Map<string, number>();
  private readonly strikes = new Map<string, number>();

  limit(agent: string, resetsAt: string | undefined, now: number, maxWaitMs: number, maxWaits: number = DEFAULT_MAX_WAITS): Wait {
    const strikes = (this.strikes.get(agent) ?? 0) + 1;
    this.strikes.set(agent, strikes);
    if (strikes > maxWaits) {
      return {
        halt: `agent "${agent}" reported a rate limit ${strikes} times in a row without a call getting through (rate_limit_max_waits = ${maxWaits}): its reports are no longer waited out; check the agent and its provider, then run again`,
      };
    }
    const wait = rateLimitWait({ resetsAt, strikes, now, maxWaitMs, agent });
    if ("halt" in wait) return wait;
    const until = Math.max(wait.until, this.ends.get(agent) ?? 0); // an earlier, longer wait still holds
    this.ends.set(agent, until);
    return wait.beyond ? { until, beyond: true } : { until };
  }

  /** The agents whose wait ends further away than `maxWaitMs`: not waited out in this run. */
  beyond(now: number, maxWaitMs: number): { agent: string; until: number }[] {
    return [...this.ends].filter(([, until]) => until - now > maxWaitMs).map(([agent, until]) => ({ agent, until }));
  }

  /** A call on this agent got through: the next limit starts the backoff again. */
  clear(agent: string): void {
    this.strikes.delete(agent);
  }

  waiting(agent: string, now: number): boolean {
    return this.until(agent) > now;
  }

  /** When this agent's wait ends (0: it never had one). */
  until(agent: string): number {
    return this.ends.get(agent) ?? 0;
  }

  /** The earliest end of a wait still running. */
  nextEnd(now: number): number | undefined {
    const ends = [...this.ends.values()].filter((until) => until > now);
    return ends.length ? Math.min(...ends) : undefined;
  }
}
