import type { PlantedCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import type { PacketHistory } from "../ledger/fold.js";

export interface RecordedAttempt {
  planted: { commit: string; files: string[]; cases: Record<string, PlantedCases> } | undefined;
  gates: GateReport[];
  counts: { held: number; violated: number; unverifiable: number } | undefined;
}

/** What the ledger says about one attempt: enough to land its gated commit later (approve, merge-blocked). */
export function recordedAttempt(record: PacketHistory, attempt: number): RecordedAttempt {
  let planted: RecordedAttempt["planted"];
  let counts: RecordedAttempt["counts"];
  const gates: GateReport[] = [];
  for (const event of record.events) {
    if (!("attempt" in event) || event.attempt !== attempt) continue;
    if (event.kind === "planted") planted = { commit: event.commit, files: event.files, cases: event.cases ?? {} };
    if (event.kind === "review-recorded") counts = { held: event.held, violated: event.violated, unverifiable: event.unverifiable };
    if (event.kind === "gate-finished") gates.push({ name: event.gate, status: event.result, summary: event.detail ?? "", findings: [], durationMs: event.durationMs });
  }
  return { planted, gates, counts };
}
