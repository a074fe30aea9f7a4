/** A named, checkable property a packet declares; the reviewer rules on each one. */
export interface Invariant {
  id: string;
  critical: boolean;
  assert: string;
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
  maxAttempts: number;
  forbiddenPaths: string[];
  /** Undefined: no positive scope was declared, any path may change. */
  allowedPaths: string[] | undefined;
  deletablePaths: string[];
  brief: string;
  invariants: Invariant[];
  /** Where it came from: path relative to the repository root, and sha256 of the file's bytes. */
  file: string;
  sha256: string;
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
}
