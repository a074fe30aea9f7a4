import { join } from "node:path";
import type { AgentAdapter } from "../agents/types.js";
import type { Config, Surface } from "../config/types.js";
import type { Owner } from "../ledger/events.js";
import type { Ledger } from "../ledger/ledger.js";
import type { WorkerClaims } from "../ledger/pg-claims.js";
import type { PgLandings } from "../ledger/pg-landings.js";
import type { Emit } from "../log/progress.js";
import type { Packet } from "../packet/types.js";
import { worktreesDir } from "../util/factory-home.js";
import type { Budget } from "./budget.js";
import type { Notifier } from "./notify.js";
import type { AgentWaits } from "./rate-limits.js";

// Where the factory keeps its worktrees: in util/ (guards and git below the loop need it too).
export { factoryHome, factoryHomeWarning, fallbackWarning, hasDotDirectory, ownDirectory, SHARED_TMP, worktreesDir } from "../util/factory-home.js";

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
  /** Tells a person when a packet needs them or blocks, without holding the run. */
  notifier?: Notifier;
  /** On the PostgreSQL ledger: this worker's leased, fenced claims (ledger/pg-claims.ts). */
  claims?: WorkerClaims;
  /** On the PostgreSQL ledger: the fleet's landing queue, through which this worker's gated attempts land (merge/fleet-landing.ts). */
  landings?: PgLandings;
  /** Set on a packet's own context (the run's, with the packet's claim signal joined in): the run's context itself. */
  runContext?: RunContext;
  /** The commit whose committed config this run uses (read at its start). */
  configFrom?: string;
}

export const RUNS_DIR = ".factory/runs";

export function worktreePath(root: string, packet: string): string {
  return join(worktreesDir(root), packet);
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

/** Why running attempts were stopped by `factory pause --interrupt`: the abort reason their signal carries. */
export class Paused extends Error {
  constructor(paused: { by: string; at: string }) {
    super(pausedBy(paused));
  }
}

/** Pure: who paused the fleet, and when. */
export function pausedBy(paused: { by: string; at: string }): string {
  return `paused by ${paused.by} at ${paused.at}`;
}

export function checkInterrupted(signal: AbortSignal): void {
  if (signal.aborted) throw new Interrupted();
}
