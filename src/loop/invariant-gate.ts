import type { GateConfig } from "../config/types.js";

/** The gate name an invariant's check runs under: `invariant-<id>`. */
export const INVARIANT_GATE_PREFIX = "invariant-";

/** Pure: an invariant's check as a command gate (not a tests gate: its exit status is the ruling). */
export function invariantGate(id: string, check: string): GateConfig {
  return { name: `${INVARIANT_GATE_PREFIX}${id}`, run: check, files: undefined, fix: undefined, tests: false, timeoutMs: undefined };
}
