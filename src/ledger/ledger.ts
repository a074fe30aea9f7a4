import type { EventBody, LedgerEvent } from "./events.js";
import type { LedgerState, PacketHistory, PacketRecord } from "./fold.js";
import type { ChainBreak } from "./scan.js";

/** The ledger as a reader sees it: the folded state, lines that could not be used, and where the hash chain breaks. */
export interface LedgerView<R extends PacketRecord = PacketRecord> {
  state: LedgerState<R>;
  warnings: string[];
  broken?: ChainBreak;
  /**
   * The ledger this process had read from is gone or replaced under it (deleted, emptied, rewritten): what the
   * view shows is not the history the process acted on. Said from then on, by every later view of the process.
   */
  lost?: string;
  /** The `version()` of the content this view covers; undefined when the ledger cannot name it (a last line still being written). */
  version?: string;
}

/** What a caller may do while holding the ledger's exclusive lock. */
export interface LedgerTransaction {
  /** The state as of now: nothing else appends while the transaction lasts. */
  read(): Promise<LedgerView>;
  append(events: readonly LedgerEvent[]): Promise<void>;
}

/**
 * The narrow interface every part of the factory uses to reach the ledger:
 * append events, read the folded state, read packets' histories, and do a
 * read-then-append (a claim, a lock takeover) atomically. The file backend
 * (`file-ledger.ts`) is the one there is; a shared database could be another
 * without the loop changing.
 */
export interface Ledger {
  /** Appends events, durably, before returning (the step that depends on them runs only then). */
  append(bodies: readonly EventBody[]): Promise<LedgerEvent[]>;
  /** The current state of every packet and run; cheap to call often (it costs the events since the last read or snapshot). */
  read(): Promise<LedgerView>;
  /**
   * The state folded from the first line, trusting no snapshot (a snapshot
   * carries no chain of its own): what a run starts from. Later reads in the
   * same process go on from here.
   */
  verify(): Promise<LedgerView>;
  /** The state with every packet's events in order: a full read, for commands that show or judge history. */
  history(): Promise<LedgerView<PacketHistory>>;
  /**
   * A cheap token for the ledger's content as of now, new after every
   * append, equal to the `version` of a view read from the same content; or
   * undefined when it cannot say. What a caller derived from a view stays
   * good while the token is the same.
   */
  version(): Promise<string | undefined>;
  /** Runs `action` holding the exclusive lock. */
  transaction<T>(action: (tx: LedgerTransaction) => Promise<T>): Promise<T>;
  /** Where it lives, as a person reads it (a file's path, a database's URL with no password). */
  readonly where: string;
  /** Every stored line, exactly as stored (each event's JSON with its `prev` link), in order: what `ledger export` writes. */
  lines(): Promise<string[]>;
  /**
   * Writes exported lines, exactly, into this ledger, which must hold no event
   * (`ledger import`); refuses otherwise, writing nothing.
   */
  importLines(lines: readonly string[]): Promise<{ ok: true } | { ok: false; reason: string }>;
}
