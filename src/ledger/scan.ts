import { createHash } from "node:crypto";
import { shapeProblem } from "./event-shape.js";
import { EVENT_KINDS, type EventKind, type LedgerEvent, SCHEMA_VERSION } from "./events.js";

export const STATE_DIR = ".factory/state";
export const LEDGER_FILE = "ledger.jsonl";
/** A fold of the ledger up to a line, beside it (file-ledger.ts). */
export const SNAPSHOT_FILE = "ledger.snapshot.json";

export interface ChainBreak {
  line: number;
  reason: string;
  /** How the ledger names the line, when it is not a line of the file (a database's event number). */
  where?: string;
}

/**
 * How far a scan of the ledger has come: everything a later scan needs to
 * go on from here as if it had read the whole file. `offset` is the byte
 * after the last complete line; `lastHash` is the hash the next line must
 * name (sha256 of the last non-empty line), so it also stands for all that
 * came before it (each line names its predecessor's hash).
 */
export interface ScanPosition {
  offset: number;
  /** Lines read so far (for line numbers in warnings). */
  line: number;
  lastHash: string;
  /** Where the last non-empty line starts: its bytes up to `offset` must hash to `lastHash`. */
  lastLineStart: number;
  /** A line carrying a chain link was seen: from then on every line must carry one. */
  chained: boolean;
  broken?: ChainBreak;
}

export const SCAN_START: ScanPosition = { offset: 0, line: 0, lastHash: "", lastLineStart: 0, chained: false };

/** The hash a line's successor names: sha256 of the line's exact text; "" for the start of the ledger. */
export function chainHash(line: string): string {
  return line === "" ? "" : createHash("sha256").update(line).digest("hex");
}

/**
 * Pure, line at a time: checks each line's JSON, schema, kind and chain link
 * and hands on the events that can be used, collecting warnings for the rest.
 * It never holds more than one line, so a ledger of any size can be read as
 * a stream.
 */
export class LedgerScanner {
  /** Warnings about complete lines. */
  readonly warnings: string[] = [];
  /** Warnings about a last line without its newline (a torn write): not part of `complete`. */
  readonly tornWarnings: string[] = [];
  private position: ScanPosition;
  private tornBroken: ChainBreak | undefined;

  constructor(
    from: ScanPosition = SCAN_START,
    private readonly onEvent: (event: LedgerEvent, complete: boolean) => void = () => undefined,
    /** How a warning names line `number`: the file's path and line, or a database's event number. */
    private readonly where: (number: number) => string = fileLine,
  ) {
    this.position = { ...from };
  }

  /** How far the complete lines go: where a later scan can start. */
  get complete(): ScanPosition {
    return { ...this.position };
  }

  /** Everything read, a torn last line included. */
  get at(): ScanPosition {
    const broken = this.position.broken ?? this.tornBroken;
    return { ...this.position, ...(broken ? { broken } : {}) };
  }

  /**
   * One line without its newline; `end` is the byte offset after it (and its
   * newline, when `complete`). An incomplete line is the file's torn end: it
   * is reported but never counted into the position.
   */
  line(text: string, end: number, complete: boolean): void {
    const position = this.position;
    const number = position.line + 1;
    const start = position.offset;
    if (complete) {
      position.line = number;
      position.offset = end;
    }
    if (text === "") return;
    const expected = position.lastHash;
    if (complete) {
      position.lastHash = chainHash(text);
      position.lastLineStart = start;
    }
    const where = this.where(number);
    const warnings = complete ? this.warnings : this.tornWarnings;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      warnings.push(complete ? `${where}: not a JSON event (an earlier write was cut off?); it is ignored` : `${where}: the last line was cut off mid-write (a crash?); it is ignored`);
      return;
    }
    if (!isEvent(value)) {
      warnings.push(`${where}: not a ledger event; it is ignored`);
      return;
    }
    // Lines before the first chained one were written by a factory before the chain existed.
    const link = (value as { prev?: unknown }).prev;
    if (complete && typeof link === "string") position.chained = true;
    if (!position.broken && (position.chained || typeof link === "string") && link !== expected) {
      const broken: ChainBreak = {
        ...(this.where !== fileLine ? { where: this.where(number) } : {}),
        line: number,
        reason:
          typeof link === "string"
            ? "it does not name the hash of the line before it (a line was edited, removed or inserted here)"
            : "it carries no link to the line before it (it was not written by the factory)",
      };
      if (complete) position.broken = broken;
      else this.tornBroken = broken;
    }
    if (value.v > SCHEMA_VERSION) {
      warnings.push(`${where}: written by a newer factory (schema ${value.v}); it is ignored — upgrade factory`);
      return;
    }
    if (!EVENT_KINDS.includes(value.kind)) {
      warnings.push(`${where}: unknown event kind "${value.kind}"; it is ignored`);
      return;
    }
    // Every event but a run's own is about one packet: without its id it cannot be folded.
    if (!RUN_KINDS.has(value.kind) && typeof (value as { packet?: unknown }).packet !== "string") {
      warnings.push(`${where}: a "${value.kind}" event without a packet id; it is ignored`);
      return;
    }
    const problem = shapeProblem(value.kind, value);
    if (problem) {
      warnings.push(`${where}: a "${value.kind}" event whose fields do not fit (${problem}); it is ignored`);
      return;
    }
    const { prev: _prev, ...event } = value as LedgerEvent & { prev?: string };
    this.onEvent(event as LedgerEvent, complete);
  }
}

/** A line of the ledger file, as warnings name it. */
export function fileLine(number: number): string {
  return `${STATE_DIR}/${LEDGER_FILE}:${number}`;
}

/** The events about a run rather than a packet. */
const RUN_KINDS = new Set<string>([
  "run-started",
  "run-ended",
  "run-lock-taken-over",
  "spent",
  "ledger-restarted",
  "batch-gated",
  "remote-unreachable",
  "remote-reachable",
  "repairs-first",
  "paused",
  "resumed",
]);

function isEvent(value: unknown): value is Record<string, unknown> & { v: number; ts: string; kind: EventKind } {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.v === "number" && typeof record.ts === "string" && typeof record.kind === "string";
}

/**
 * Splits byte chunks into lines for a scanner, keeping byte offsets exact
 * (a multi-byte character may straddle two chunks). `base` is the file
 * offset of the first chunk.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly scanner: LedgerScanner,
    private offset: number,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, from)) {
      const piece = chunk.subarray(from, newline);
      const bytes = this.pending.length > 0 ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      this.offset += bytes.length + 1;
      this.scanner.line(bytes.toString("utf8"), this.offset, true);
      from = newline + 1;
    }
    if (from < chunk.length) {
      this.pending.push(Buffer.from(chunk.subarray(from)));
      this.pendingBytes += chunk.length - from;
    }
  }

  /** The end of the file: what is left is a line without its newline (a torn write). */
  end(): void {
    if (this.pendingBytes === 0) return;
    const bytes = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.scanner.line(bytes.toString("utf8"), this.offset + bytes.length, false);
  }
}
