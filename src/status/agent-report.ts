import type { LedgerEvent } from "../ledger/events.js";

/** One agent and model, as `factory report --agents` shows it (`--json`: `agents`). */
export interface AgentRow {
  agent: string;
  model: string;
  role: "implementer" | "reviewer";
  /** Attempts it implemented, or reviews it made. */
  attempts: number;
  /** Implementers: packets it landed with the first attempt. */
  merged_first_time: number;
  merged: number;
  /** Implementers: attempts it reported complete while a gate the factory ran failed. */
  claimed_complete_gate_failed: number;
  /** Implementers: attempts the tamper or scope gate refused. */
  tamper_or_scope: number;
  questions: number;
  /** Reviewers: rulings the factory overrode because the facts disagreed. */
  overridden: number;
  cost_usd: number;
  /** Implementers: cost per merged packet (null before one merged). */
  cost_per_merged_usd: number | null;
}

/**
 * Pure: per agent and model, from the ledger's events (every worker's, on a
 * shared ledger), what it claimed set against what the factory found. An
 * agent is known by the tier its calls ran on (`tierAgent`); the model is the
 * one the call reported, else the tier's.
 */
export function agentReport(packets: readonly { id: string; events: readonly LedgerEvent[] }[], tierAgent: (tier: string) => { agent: string; model: string } | undefined): AgentRow[] {
  const rows = new Map<string, AgentRow>();
  const row = (agent: string, model: string, role: AgentRow["role"]): AgentRow => {
    const key = JSON.stringify([agent, model, role]);
    let found = rows.get(key);
    if (!found) {
      found = {
        agent,
        model,
        role,
        attempts: 0,
        merged_first_time: 0,
        merged: 0,
        claimed_complete_gate_failed: 0,
        tamper_or_scope: 0,
        questions: 0,
        overridden: 0,
        cost_usd: 0,
        cost_per_merged_usd: null,
      };
      rows.set(key, found);
    }
    return found;
  };
  for (const packet of packets) {
    // Who implemented and who reviewed each attempt: the first call of the role in it.
    const implementer = new Map<number, AgentRow>();
    const reviewer = new Map<number, AgentRow>();
    const reported = new Map<number, string>();
    const failedGates = new Map<number, Set<string>>();
    for (const event of packet.events) {
      if (event.kind === "agent-finished" && (event.role === "implementer" || event.role === "reviewer")) {
        const known = event.tier ? tierAgent(event.tier) : undefined;
        const entry = row(known?.agent ?? "(unknown agent)", event.model ?? known?.model ?? "(unknown model)", event.role);
        const byAttempt = event.role === "implementer" ? implementer : reviewer;
        if (!byAttempt.has(event.attempt)) {
          byAttempt.set(event.attempt, entry);
          entry.attempts += 1;
        }
        entry.cost_usd += event.costUsd ?? event.estimatedUsd ?? 0;
      } else if (event.kind === "implementer-reported") {
        reported.set(event.attempt, event.status);
      } else if (event.kind === "gate-finished" && event.result === "fail") {
        const gates = failedGates.get(event.attempt) ?? new Set<string>();
        gates.add(event.gate);
        failedGates.set(event.attempt, gates);
      } else if (event.kind === "asked") {
        const entry = implementer.get(event.attempt);
        if (entry) entry.questions += 1;
      } else if (event.kind === "review-recorded") {
        const entry = reviewer.get(event.attempt);
        if (entry) entry.overridden += event.overrides.length;
      } else if (event.kind === "merged") {
        const entry = implementer.get(event.attempt);
        if (entry) {
          entry.merged += 1;
          if (event.attempt === 1) entry.merged_first_time += 1;
        }
      }
    }
    for (const [attempt, entry] of implementer) {
      const failed = failedGates.get(attempt);
      if (!failed) continue;
      if (reported.get(attempt) === "complete") entry.claimed_complete_gate_failed += 1;
      if (failed.has("tamper") || failed.has("scope")) entry.tamper_or_scope += 1;
    }
  }
  for (const entry of rows.values()) {
    entry.cost_usd = Math.round(entry.cost_usd * 100) / 100;
    entry.cost_per_merged_usd = entry.role === "implementer" && entry.merged > 0 ? Math.round((entry.cost_usd / entry.merged) * 100) / 100 : null;
  }
  return [...rows.values()].sort((a, b) => a.role.localeCompare(b.role) || a.agent.localeCompare(b.agent) || a.model.localeCompare(b.model));
}
