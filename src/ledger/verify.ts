import { stat } from "node:fs/promises";
import { eventPacket, type LedgerEvent } from "./events.js";
import { foldLedger, type PacketStatus } from "./fold.js";
import { type ChainBreak, LedgerScanner, SCAN_START } from "./scan.js";
import { ledgerPath, scanFile } from "./store.js";

/** The ledger read whole, each event with its line number. */
export interface NumberedLedger {
  events: { line: number; event: LedgerEvent }[];
  warnings: string[];
  broken?: ChainBreak;
  /** Complete lines in the file. */
  lines: number;
}

/** Reads the whole ledger with line numbers; undefined when there is none. */
export async function readNumbered(root: string): Promise<NumberedLedger | undefined> {
  try {
    await stat(ledgerPath(root));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const events: NumberedLedger["events"] = [];
  const scanner: LedgerScanner = new LedgerScanner(SCAN_START, (event, complete) => {
    // A complete line is counted before its event is handed on; a torn one is the line after the last complete one.
    events.push({ line: scanner.complete.line + (complete ? 0 : 1), event });
  });
  await scanFile(ledgerPath(root), scanner, 0);
  const broken = scanner.at.broken;
  return { events, warnings: [...scanner.warnings, ...scanner.tornWarnings], lines: scanner.complete.line, ...(broken ? { broken } : {}) };
}

/** The same, from a ledger's stored lines (a database's events, numbered from 1); undefined when there are none. */
export function numberedFromLines(lines: readonly string[], where: (number: number) => string): NumberedLedger | undefined {
  if (lines.length === 0) return undefined;
  const events: NumberedLedger["events"] = [];
  const scanner: LedgerScanner = new LedgerScanner(SCAN_START, (event) => events.push({ line: scanner.complete.line, event }), where);
  for (const [at, line] of lines.entries()) scanner.line(line, at + 1, true);
  const broken = scanner.at.broken;
  return { events, warnings: scanner.warnings, lines: lines.length, ...(broken ? { broken } : {}) };
}

/** A packet whose record rests on lines at or after a break. */
export interface Dependent {
  id: string;
  /** Its events' lines from the break on. */
  lines: number[];
  /** Its state as the whole ledger (the untrusted part included) folds it. */
  status: PacketStatus;
  attempts: number;
  costUsd: number;
}

/** What depends on the lines from a break on. */
export interface AfterBreak {
  from: number;
  to: number;
  packets: Dependent[];
  /** Runs started from the break on. */
  runs: string[];
  /** The spend recorded from the break on. */
  costUsd: number;
}

/** Pure: the packets, runs and spend whose record rests on the lines from the break on; undefined when the chain holds. */
export function afterBreak(ledger: NumberedLedger): AfterBreak | undefined {
  if (!ledger.broken) return undefined;
  const from = ledger.broken.line;
  const after = ledger.events.filter(({ line }) => line >= from);
  const state = foldLedger(ledger.events.map(({ event }) => event));
  const lines = new Map<string, number[]>();
  for (const { line, event } of after) {
    const packet = eventPacket(event);
    if (packet === undefined) continue;
    lines.set(packet, [...(lines.get(packet) ?? []), line]);
  }
  const packets = [...lines].map(([id, at]): Dependent => {
    const record = state.packets.get(id);
    return { id, lines: at, status: record?.status ?? { state: "queued" }, attempts: record?.lastAttempt ?? 0, costUsd: record?.costUsd ?? 0 };
  });
  const runs = after.flatMap(({ event }) => (event.kind === "run-started" ? [event.run] : []));
  const costUsd = after.reduce((total, { event }) => total + (event.kind === "agent-finished" || event.kind === "spent" ? (event.costUsd ?? event.estimatedUsd ?? 0) : 0), 0);
  return { from, to: Math.max(ledger.lines, from), packets, runs, costUsd };
}

/** Pure: line numbers as short ranges ("3, 7–9"). */
export function lineRanges(lines: readonly number[]): string {
  const parts: string[] = [];
  for (let at = 0; at < lines.length; ) {
    let end = at;
    while (end + 1 < lines.length && (lines[end + 1] as number) === (lines[end] as number) + 1) end += 1;
    parts.push(end === at ? String(lines[at]) : `${lines[at]}–${lines[end]}`);
    at = end + 1;
  }
  return parts.join(", ");
}
