import type { GateReport } from "../gates/types.js";
import type { EffectiveVerdict } from "../review/verdict.js";

/** How an attempt ended, before the factory decides what follows. */
export type AttemptEnd =
  | { kind: "spec-drift"; reason: string }
  | { kind: "defective-packet"; reason: string }
  | { kind: "environment-error"; reason: string }
  | { kind: "rate-limited"; reason: string; role: "implementer" | "reviewer"; resetsAt?: string }
  /** `rateLimited`: it reported a rate limit further away than rate_limit_wait; its agent's packets wait for a later run. */
  | { kind: "agent-failed"; reason: string; rateLimited?: { role: "implementer" | "reviewer"; resetsAt: string } }
  | { kind: "implementer-blocked"; reason: string }
  /** The implementer asked a person a question (process-packet.ts holds the packet for the answer while questions are left). */
  | { kind: "implementer-question"; question: string; suggestions: string[] }
  | { kind: "implementer-failed"; reason: string }
  | { kind: "result-contract"; errors: string[] }
  | { kind: "gates-red"; reports: GateReport[] }
  | { kind: "reviewer-tampered"; reason: string }
  /** Two tiers of reviewer could not give a usable review: the implementer's work was never judged. */
  | { kind: "reviewer-unusable"; reason: string }
  | { kind: "merge-conflict"; reason: string }
  | { kind: "reached-outside"; reason: string }
  | { kind: "reviewed"; verdict: EffectiveVerdict; feedback: string[]; counts: { held: number; violated: number; unverifiable: number } };
