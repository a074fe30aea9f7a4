import type { Surface } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import type { PlantedCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";

export interface GateRunInput {
  packet: Packet;
  attempt: number;
  surface: Surface | undefined;
  worktree: string;
  /** The commit right after planting: what untouched, scope and tamper compare against. */
  plantedCommit: string;
  planted: readonly string[];
  /** Per tests gate: the planted cases that must be present and pass. */
  plantedCases: Readonly<Record<string, PlantedCases>>;
  /** Nested repositories the attempt made (left out of its commit): the scope gate refuses them. */
  nested?: readonly string[];
  baseline: ReadonlyMap<string, TestResult[]>;
  /** The commit the baseline was measured at: a failing test is run again there, untouched, to tell a flaky one. */
  tip?: string;
  /** The surface's whole-tree gates (no {files}, not tests) ran green on the tip this attempt started from. */
  tipProven?: boolean;
  /** The tip's files its tests and whole-tree gates read (traced with its baseline); undefined when they were not traced. */
  tipReads?: readonly string[];
  runDir: string;
  /**
   * For the combined tree after the target moved: the agent's own change was
   * already judged by the built-in gates (merging does not alter it), so only
   * the command gates run, with {files} from the agent's change.
   */
  combined?: { agentCommit: string; builtins: GateReport[] };
  /**
   * The other packets of a merge batch, gated together with this one on the
   * combined tree (merge/batch.ts): their changes reach `{files}`, and their
   * planted cases, invariant checks and hidden tests run too.
   */
  also?: readonly BatchMember[];
}

/** A packet gated on a merge batch's combined tree beside the one a gate run is for. */
export interface BatchMember {
  packet: Packet;
  plantedCommit: string;
  plantedCases: Readonly<Record<string, PlantedCases>>;
  /** Its gated commit: its change is plantedCommit..agentCommit. */
  agentCommit: string;
}
