import { type Landed, landedIndex } from "../git/trailers.js";
import { emptyRecord, type LedgerState, type PacketRecord } from "../ledger/fold.js";
import type { Packet } from "../packet/types.js";
import type { Problem } from "../util/problem.js";

export const BOARD_SCHEMA = 1;

export type BoardState = PacketRecord["status"]["state"] | "invalid";

/** One row of `factory status`; the `--json` shape is documented in docs/reference/json.md and kept stable. */
export interface BoardRow {
  id: string;
  file: string | null;
  goal: string | null;
  state: BoardState;
  attempts_used: number;
  max_attempts: number | null;
  /** The number of its newest attempt (0: none yet): higher than attempts_used where attempts were not counted. */
  last_attempt: number;
  cost_usd: number;
  gate: "auto" | "human" | null;
  /** The tiers of its implementer and reviewer (null for a packet with no file). */
  tier?: string | null;
  reviewer?: string | null;
  requires: string[];
  reason: string | null;
  sha256: string | null;
  /** The file changed after the packet merged (the change is not run), or the file is gone. */
  note: string | null;
  commit: string | null;
  /** awaiting_answer: the implementer's question for a person (agent text), and the answers it suggested. */
  question?: { text: string; suggestions: string[] };
}

export interface Board {
  schema: number;
  branch: string;
  tip: string;
  cost_usd: number;
  counts: Record<BoardState, number>;
  packets: BoardRow[];
  problems: Problem[];
  warnings: string[];
  /** Packets whose last attempt saw the user's own repository change (the run carried on), and what changed. */
  seen?: { packet: string; attempt: number; changes: string[] }[];
}

export interface BoardInput {
  branch: string;
  tip: string;
  packets: readonly Packet[];
  /** Ids of packet files that do not validate, with their file and first problem. */
  invalid: ReadonlyMap<string, { file: string; problem: string }>;
  ledger: LedgerState;
  problems: Problem[];
  warnings: string[];
  /** Packet versions the target's history carries by their trailers: merged, whatever the ledger says. */
  landed?: readonly Landed[];
  /** Whether a running packet's owner still lives; a dead one is noted (the next run recovers it). */
  ownerAlive?: (owner: { pid: number; host: string }) => boolean;
}

/** Pure: the board from the committed queue and the ledger's fold. */
export function buildBoard(input: BoardInput): Board {
  const rows: BoardRow[] = [];
  const seen = new Set<string>();
  const landedAs = landedIndex(input.landed ?? []);
  const behindRepair = waitingForRepairs(input.ledger, (id) => landedAs(id, input.packets.find((packet) => packet.id === id)?.sha256 ?? "") !== undefined);
  for (const packet of input.packets) {
    seen.add(packet.id);
    const landed = landedAs(packet.id, packet.sha256);
    const ledgerRecord = input.ledger.packets.get(packet.id);
    // Git vouches for a landed version even when the ledger is lost or lags behind (a crash after the move).
    const record =
      landed && ledgerRecord?.status.state !== "merged"
        ? {
            ...(ledgerRecord ?? emptyRecord(packet.id)),
            sha256: packet.sha256,
            status: { state: "merged" as const, attempt: ledgerRecord?.lastAttempt ?? 0, commit: landed.commit },
            reason: undefined,
          }
        : ledgerRecord;
    const changed = record !== undefined && record.sha256 !== undefined && record.sha256 !== packet.sha256;
    const merged = record?.status.state === "merged";
    const waits = (record?.status.state ?? "queued") === "queued" ? behindRepair.get(packet.id) : undefined;
    rows.push({
      id: packet.id,
      file: packet.file,
      goal: packet.goal,
      state: changed && !merged ? "queued" : (record?.status.state ?? "queued"),
      attempts_used: changed && !merged ? 0 : (record?.attemptsUsed ?? 0),
      last_attempt: record?.lastAttempt ?? 0,
      max_attempts: packet.maxAttempts + (changed && !merged ? 0 : (record?.extraAttempts ?? 0)),
      cost_usd: round(record?.costUsd ?? 0),
      gate: packet.gate,
      tier: packet.tier,
      reviewer: packet.reviewer,
      requires: packet.requires,
      reason: changed && !merged ? "the packet file changed; the new version has not run" : (waits ?? record?.reason ?? null),
      sha256: packet.sha256,
      note:
        changed && merged
          ? "the packet file changed after it merged; the change is not run (factory reset to run it again)"
          : record?.status.state === "running" && input.ownerAlive && !input.ownerAlive(record.status.owner)
            ? `its run (pid ${record.status.owner.pid} on ${record.status.owner.host}) is gone; the next factory run recovers it`
            : null,
      commit: record?.status.state === "merged" ? record.status.commit : null,
      ...(record?.status.state === "awaiting_answer" && !changed ? { question: { text: record.status.question, suggestions: record.status.suggestions ?? [] } } : {}),
    });
  }
  for (const [id, { file, problem }] of input.invalid) {
    if (seen.has(id)) continue;
    seen.add(id);
    const record = input.ledger.packets.get(id);
    rows.push({
      id,
      file,
      goal: null,
      state: "invalid",
      attempts_used: record?.attemptsUsed ?? 0,
      max_attempts: null,
      last_attempt: record?.lastAttempt ?? 0,
      cost_usd: round(record?.costUsd ?? 0),
      gate: null,
      requires: [],
      reason: `${problem} (factory lint shows every problem)`,
      sha256: null,
      note: null,
      commit: null,
    });
  }
  for (const record of input.ledger.packets.values()) if (!seen.has(record.id)) rows.push(fileGoneRow(record, input.branch));
  const counts: Record<BoardState, number> = { queued: 0, running: 0, awaiting_human: 0, awaiting_answer: 0, in_review: 0, merged: 0, blocked: 0, invalid: 0 };
  for (const row of rows) counts[row.state] += 1;
  return {
    schema: BOARD_SCHEMA,
    branch: input.branch,
    tip: input.tip,
    cost_usd: round(input.ledger.costUsd),
    counts,
    packets: rows,
    problems: input.problems,
    warnings: input.warnings,
    seen: [...input.ledger.packets.values()].flatMap((record) => (record.outsideSeen ? [{ packet: record.id, ...record.outsideSeen }] : [])),
  };
}

/** Pure: the row of a packet the ledger knows whose file the target no longer has. */
function fileGoneRow(record: PacketRecord, branch: string): BoardRow {
  return {
    id: record.id,
    file: null,
    goal: null,
    state: record.status.state,
    attempts_used: record.attemptsUsed,
    max_attempts: null,
    last_attempt: record.lastAttempt,
    cost_usd: round(record.costUsd),
    gate: null,
    requires: [],
    reason: record.reason ?? null,
    sha256: record.sha256 ?? null,
    note: `no packet file for ${record.id} on ${branch} any more`,
    commit: record.status.state === "merged" ? record.status.commit : null,
  };
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Pure: what a person reads about a question waiting for them: the question, its suggested answers, and the command. */
export function questionLines(id: string, question: { text: string; suggestions: readonly string[] }): string[] {
  return [
    `${id} asks (the implementer's words): ${question.text}`,
    ...question.suggestions.map((suggestion, index) => `  ${index + 1}. ${suggestion}`),
    `  answer: factory answer ${id} "…"  (or --file F); no attempt is spent on a question`,
  ];
}

/**
 * Pure: the packets the newest run found waiting behind a repair (whole-tree gates red at the tip that queued
 * packets repair), and why, while a repairer has not landed.
 */
export function waitingForRepairs(ledger: Pick<LedgerState, "runs" | "packets">, landed: (id: string) => boolean): Map<string, string> {
  const waiting = new Map<string, string>();
  const newest = [...ledger.runs.values()].at(-1);
  for (const repair of newest?.repairsFirst ?? []) {
    const open = repair.repairers.filter((id) => ledger.packets.get(id)?.status.state !== "merged" && !landed(id));
    if (open.length === 0) continue;
    const gates = repair.gates.map((gate) => `"${gate}"`).join(", ");
    const why = `waits for ${open.join(", ")} to land: ${open.length === 1 ? "it repairs" : "they repair"} gate ${gates} of surface "${repair.surface}", red at the tip`;
    for (const id of repair.waiting) if (!waiting.has(id)) waiting.set(id, why);
  }
  return waiting;
}
