import { readFile, rename, writeFile } from "node:fs/promises";
import type { KnownFlaky, LedgerState, PacketRecord, RunRecord } from "./fold.js";

/**
 * Bump when fold.ts changes what it computes: a snapshot folded by another
 * version of the fold is then ignored and rebuilt, never trusted.
 */
export const FOLD_VERSION = 4;
/** A read that had to fold at least this many events leaves a snapshot for the next process. */
export const SNAPSHOT_AFTER_EVENTS = 500;

/** A fold's state as a snapshot file holds it (JSON: its maps as lists). */
export interface SavedState {
  packets: PacketRecord[];
  runs: RunRecord[];
  costUsd: number;
  flaky?: Record<string, KnownFlaky>;
  openCalls?: LedgerState["openCalls"];
  spentByHour?: LedgerState["spentByHour"];
  paused?: LedgerState["paused"];
  tierCosts?: LedgerState["tierCosts"];
}

/** Pure: the state as a snapshot saves it. */
export function savedState(state: LedgerState): SavedState {
  return {
    packets: [...state.packets.values()],
    runs: [...state.runs.values()],
    costUsd: state.costUsd,
    flaky: state.flaky,
    openCalls: state.openCalls,
    spentByHour: state.spentByHour,
    tierCosts: state.tierCosts,
    ...(state.paused ? { paused: state.paused } : {}),
  };
}

/** Pure: whether a snapshot's JSON has a saved state's shape (a file cut short or edited by hand is folded past, never read). */
export function isSavedState(value: unknown): value is SavedState {
  const saved = value as Partial<SavedState> | undefined;
  return Array.isArray(saved?.packets) && Array.isArray(saved.runs) && typeof saved.costUsd === "number";
}

/** Pure: the state a snapshot saved (the fields a snapshot of an older factory lacks are empty). */
export function restoredState(saved: SavedState): LedgerState {
  return {
    packets: new Map(saved.packets.map((record) => [record.id, record])),
    runs: new Map(saved.runs.map((run) => [run.run, run])),
    costUsd: saved.costUsd,
    flaky: saved.flaky ?? {},
    openCalls: saved.openCalls ?? {},
    spentByHour: saved.spentByHour ?? {},
    tierCosts: saved.tierCosts ?? {},
    ...(saved.paused ? { paused: saved.paused } : {}),
  };
}

/** A snapshot file's JSON, or undefined when there is none or it cannot be read (the fold then starts from the beginning). */
export async function loadSnapshotFile(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

let saves = 0;

/** Written by rename, so a reader sees a whole snapshot or the old one; its own temporary file per write (two reads in one process may both save). */
export async function saveSnapshotFile(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.${++saves}.tmp`;
  await writeFile(temporary, JSON.stringify(value), "utf8");
  await rename(temporary, path);
}
