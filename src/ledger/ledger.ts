import type { EventBody, LedgerEvent } from "./events.js";
import type { LedgerState, PacketHistory, PacketRecord } from "./fold.js";
import type { ChainBreak } from "./scan.js";

/** The ledger as a reader sees it: the folded state, lines that could not be used, and where the hash chain breaks. */
export interface LedgerView<R extends PacketRecord = PacketRecord> {
  state: LedgerState<R>;
  warnings: string[];
  broken?: ChainBreak;
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
  /** Runs `action` holding the exclusive lock. */
  transaction<T>(action: (tx: LedgerTransaction) => Promise<T>): Promise<T>;
}
