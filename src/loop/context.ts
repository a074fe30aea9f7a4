import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import type { AgentAdapter } from "../agents/types.js";
import type { Config, Surface } from "../config/types.js";
import type { Owner } from "../ledger/events.js";
import type { Ledger } from "../ledger/ledger.js";
import type { WorkerClaims } from "../ledger/pg-claims.js";
import type { PgLandings } from "../ledger/pg-landings.js";
import type { Emit } from "../log/progress.js";
import type { Packet } from "../packet/types.js";
import type { Budget } from "./budget.js";
import type { Notifier } from "./notify.js";
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

/**
 * Where a repository's worktrees live: outside it, under
 * `<factory home>/worktrees/<name>-<hash of the repository's path>`. Tools that
 * look for configuration by walking up from where they run (eslint, prettier,
 * editorconfig, pytest's rootdir and conftest search, tsconfig `extends`)
 * must never reach the user's checkout and its files from a worktree. Task
 * worktrees are named by packet id (a letter first); the factory's scratch
 * worktrees start with `_` (`_baseline-…`, `_batch-…`), never with a dot.
 */
export function worktreesDir(root: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // not there (yet): its path as given
  }
  return join(factoryHome(), "worktrees", `${basename(real)}-${createHash("sha256").update(real).digest("hex").slice(0, 12)}`);
}

/**
 * The factory's directory for worktrees: `<cache>/factory` (`$XDG_CACHE_HOME`,
 * else `~/.cache`) when that path has no dot-directory in it, else
 * `/var/tmp/factory-<uid>` (kept across reboots, this user's alone). Test
 * runners exclude dot-directories by pattern matched against absolute paths
 * (vitest 0.x excludes any path through `.cache`, `.git`, `.idea`, `.output` or
 * `.temp`), so a worktree under `~/.cache` ran no test at all.
 */
export function factoryHome(): string {
  const cache = process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), ".cache");
  const inCache = join(cache, "factory");
  if (!hasDotDirectory(inCache)) return inCache;
  let home = homes.get(inCache);
  if (home === undefined) {
    const uid = process.getuid?.();
    const shared = uid === undefined ? undefined : join(SHARED_TMP, `factory-${uid}`);
    home = (shared && uid !== undefined ? ownDirectory(shared, uid) : undefined) ?? inCache;
    homes.set(inCache, home);
    if (shared && home === inCache) fallbacks.set(inCache, fallbackWarning(shared, inCache));
  }
  return home;
}
const homes = new Map<string, string>();
const fallbacks = new Map<string, string>();

/** What to tell a person when the worktrees could not go to `/var/tmp/factory-<uid>` and went under a dot-directory; else undefined. */
export function factoryHomeWarning(): string | undefined {
  const home = factoryHome();
  return fallbacks.get(home);
}

/** Pure: the warning for worktrees that fell back to a cache path with a dot-directory. */
export function fallbackWarning(shared: string, inCache: string): string {
  return `${shared} is not this user's own directory (another user's, a link, or writable by others), so the worktrees go under ${inCache}, whose dot-directory some test runners skip (vitest 0.x finds no test there); remove ${shared}, or set XDG_CACHE_HOME to a path without a dot-directory`;
}

/** Where a cache path with a dot-directory in it gives way to: a directory kept across reboots. */
export const SHARED_TMP = "/var/tmp";

/** Pure: whether a path has a component starting with a dot (`.cache`), which tools may exclude. */
export function hasDotDirectory(path: string): boolean {
  return path.split(/[\\/]/).some((part) => part.startsWith(".") && part !== "." && part !== "..");
}

/**
 * `dir` made (0700) or found as this user's own real directory, not writable
 * by others; undefined when another user made it (or a link is there) in
 * the shared directory: the factory never works in a place another user controls.
 */
export function ownDirectory(dir: string, uid: number): string | undefined {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // there already (checked below), or the shared directory is not writable
  }
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o022) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

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
