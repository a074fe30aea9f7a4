/** The attempts a packet (or the config's default) may allow: bounds checked where either is read. */
export const MIN_ATTEMPTS = 1;
export const MAX_ATTEMPTS = 10;

/** A named, checkable property a packet declares; the reviewer rules on each one. */
export interface Invariant {
  id: string;
  critical: boolean;
  assert: string;
  /** A command the factory runs on the gated tree (as a gate, in the sandbox): exit 0 is the ruling `held`, else `violated`. */
  check?: string;
}

export type GateMode = "auto" | "human";

/**
 * A packet as the program uses it: every default filled in. What the file
 * says, with optional fields, is only ever seen by `normalize.ts`.
 */
export interface Packet {
  id: string;
  slug: string;
  goal: string;
  specCommit: string;
  specPath: string;
  /** Undefined only when the config declares no surfaces. */
  surface: string | undefined;
  tier: string;
  reviewer: string;
  gate: GateMode;
  requires: string[];
  /**
   * Whole-tree gates of its surface (a build, a lint of everything) that are red at the tip and this packet
   * turns green: their red there is its baseline, not a refusal of the run; the surface's other packets wait for it.
   */
  repairs: string[];
  maxAttempts: number;
  forbiddenPaths: string[];
  /** Undefined: no positive scope was declared, any path may change. */
  allowedPaths: string[] | undefined;
  deletablePaths: string[];
  /** Tests the packet's author removes on purpose (`path::name`, or a whole file's `path`): their absence is no regression. */
  retiredTests: string[];
  /**
   * The team's test files (or globs) the packet changes on purpose: the candidate's versions judge it,
   * and the reviewer rules on each change. Any other test file it changes is run as the tip has it.
   */
  changedTests: string[];
  /** Planted files that are not tests (fixtures, data): never required to be collected by a runner. */
  supportFiles: string[];
  brief: string;
  invariants: Invariant[];
  /** Where it came from: path relative to the repository root. */
  file: string;
  /** The version: sha256 of the file's bytes and of every planted file (path, mode, blob) under packets/supplied/<ID>/. */
  sha256: string;
  /** Repository paths the planted files land at. */
  planted: string[];
}

/** A packet file as read from git, before parsing. */
export interface PacketSource {
  file: string;
  text: string;
}

/** What packets are validated against: the parts of the config they refer to. */
export interface PacketContext {
  /** Tier names, weakest first; undefined when the config could not be read (tier checks are skipped). */
  tiers: readonly string[] | undefined;
  /** Surface names in config order, the first is the default; undefined as for tiers. */
  surfaces: readonly string[] | undefined;
  defaultMaxAttempts: number;
  /** Per surface, its gates' names and whether each judges the whole tree (`repairs` may name only those); undefined as for tiers. */
  gates?: ReadonlyMap<string, readonly { name: string; wholeTree: boolean }[]>;
  /** Surfaces with a `tests = true` gate; undefined as for tiers (the planted-tests check is skipped). */
  testSurfaces?: readonly string[] | undefined;
  /** The files under `packets/supplied/<ID>/` at the tip, by packet id: part of each packet's version. */
  supplied?: ReadonlyMap<string, readonly SuppliedFile[]>;
}

/** One planted file as git has it: `path` relative to `packets/supplied/<ID>/`. */
export interface SuppliedFile {
  path: string;
  mode: string;
  sha: string;
}
