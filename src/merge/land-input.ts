import type { TestResult } from "../gates/junit.js";
import type { PlantedCases } from "../gates/test-compare.js";
import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";
import type { Provenance } from "./message.js";

/** A combined tree a merge batch gated green (merge/batch.ts). */
export interface CoveredTree {
  reports: GateReport[];
  /** The tests gates' results: only for the whole combination's tree, the one they ran on. */
  tests?: ReadonlyMap<string, TestResult[]>;
  /** The packets of the batch that covered it. */
  packets: string[];
}

/** What a landing needs (merge/land.ts): the gated attempt, its checks, and what a merge batch found. */
export interface LandInput {
  packet: Packet;
  attempt: number;
  /** The gated commit on the task branch. */
  commit: string;
  /** The target tip the attempt started from. */
  fork: string;
  planted: readonly string[];
  plantedCases: Readonly<Record<string, PlantedCases>>;
  plantedCommit: string;
  provenance: Provenance;
  runDir: string;
  /** The tests gates' per-test results on `commit`: the landing commit's baseline when it lands that exact tree. */
  tests?: ReadonlyMap<string, TestResult[]>;
  /** Combined trees a merge batch gated green (merge/batch.ts): bringing the work up to the tip onto one of them needs no re-gate of its own. */
  covered?: ReadonlyMap<string, CoveredTree>;
  /** The combined tree a merge batch found broken by this packet: bringing its work up to the tip onto exactly that tree fails with those reports, without a re-gate. */
  broken?: { tree: string; reports: GateReport[]; packets: string[] };
  /** Where the work is checked out: the packet's task worktree unless said (the fleet's lander lands another worker's candidate from a scratch one). */
  worktree?: string;
  /** Another worker's claim the landing is made under (the fleet's lander): its fence, and the check that it is still live, right before the push. */
  claim?: { fence: number; assertCurrent(): Promise<void> };
}
