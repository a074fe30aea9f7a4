import { flakyLine } from "../gates/flaky.js";

/** A test found flaky at the tip, as the ledger keeps it. */
export interface FlakyRow {
  test: string;
  gate: string;
  failed: number;
  runs: number;
  packet: string;
}

/** "flaky at the tip: ID, 2 of 3 runs failed (gate pytest, found gating P0002): left out of its verdict; rerun until steady". */
export function flakyText(row: FlakyRow): string {
  return `${flakyLine(row.test, row.failed, row.runs)} (gate ${row.gate}, found gating ${row.packet}): left out of the verdict of a packet it fails in, until a rerun finds it steady`;
}
