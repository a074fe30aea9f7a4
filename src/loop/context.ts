import { join } from "node:path";
import type { AgentAdapter } from "../agents/types.js";
import type { Config, Surface } from "../config/types.js";
import type { Owner } from "../ledger/events.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Emit } from "../log/progress.js";
import type { Packet } from "../packet/types.js";
import type { Budget } from "./budget.js";
import type { AgentWaits } from "./rate-limits.js";

/** What every step of a run needs; passed explicitly, never global. */
export interface RunContext {
  root: string;
  /** Every event of the run goes through it. */
  ledger: Ledger;
  config: Config;
  branch: string;
  owner: Owner;
  emit: Emit;
  signal: AbortSignal;
  /** Adapter per agent name, checked in preflight. */
  adapters: ReadonlyMap<string, AgentAdapter>;
  budget: Budget;
  /** Rate limits per agent, shared by every worker of the run. */
  waits: AgentWaits;
}

export const WORKTREES_DIR = ".factory/worktrees";
export const RUNS_DIR = ".factory/runs";

export function worktreePath(root: string, packet: string): string {
  return join(root, WORKTREES_DIR, packet);
}

export function taskBranch(packet: string): string {
  return `factory/${packet}`;
}

export function attemptDir(root: string, packet: string, attempt: number): string {
  return join(root, RUNS_DIR, packet, `attempt-${attempt}`);
}

export function surfaceOf(config: Config, packet: Packet): Surface | undefined {
  return config.surfaces.find((surface) => surface.name === packet.surface);
}

/** Thrown when the run is interrupted (SIGINT): the attempt is recorded as interrupted, not decided. */
export class Interrupted extends Error {
  constructor() {
    super("interrupted");
  }
}

export function checkInterrupted(signal: AbortSignal): void {
  if (signal.aborted) throw new Interrupted();
}
