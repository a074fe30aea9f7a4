import { createHash } from "node:crypto";
import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";

export interface Provenance {
  attempt: number;
  gates: readonly GateReport[];
  counts: { held: number; violated: number; unverifiable: number } | undefined;
  approvedBy?: string;
  /** The claim's fence on the PostgreSQL ledger: `Factory-Claim: <id> fence <n>`. */
  fence?: number;
  /** A person's answers the work was done with: `Factory-Answer: <sha256 of the answer, 12> by <who> at <when>` each. */
  answers?: readonly { answer: string; by: string; at?: string }[];
}

/** A conventional-commit type and optional scope at the start of a line: `feat: `, `fix(parser)!: `. */
const CONVENTIONAL = /^[a-z]+(\([^)]*\))?!?: /;

/**
 * Pure: the squash commit's message: the configured subject, the goal, and trailers recording how it got in.
 * A goal written as a conventional commit (`fix(parser): …`) keeps its own type: a template's type right
 * before `{goal}` is dropped rather than doubled (`feat: fix(parser): …`).
 */
export function mergeMessage(template: string, packet: Packet, provenance: Provenance): string {
  const typed = CONVENTIONAL.test(packet.goal) ? template.replace(/^[a-z]+(\([^)]*\))?!?: (?=\{goal\})/, "") : template;
  const subject = typed.replaceAll("{id}", packet.id).replaceAll("{slug}", packet.slug).replaceAll("{goal}", packet.goal);
  const trailers = [
    `Factory-Packet: ${packet.id}`,
    `Factory-Packet-Sha256: ${packet.sha256}`,
    `Factory-Attempt: ${provenance.attempt}`,
    `Factory-Gates: ${provenance.gates.map((gate) => `${gate.name}=${gate.status}`).join(" ") || "none"}`,
    ...(provenance.counts ? [`Factory-Invariants: held=${provenance.counts.held} violated=${provenance.counts.violated} unverifiable=${provenance.counts.unverifiable}`] : []),
    ...(provenance.approvedBy ? [`Factory-Approved-By: ${provenance.approvedBy}`] : []),
    ...(provenance.fence !== undefined ? [`Factory-Claim: ${packet.id} fence ${provenance.fence}`] : []),
    ...(provenance.answers ?? []).map((entry) => `Factory-Answer: ${answerId(entry.answer)} by ${oneLine(entry.by)}${entry.at ? ` at ${entry.at}` : ""}`),
  ];
  return `${subject}\n\n${packet.goal}\n\n${trailers.join("\n")}\n`;
}

/** Pure: how a trailer names an answer: the start of its text's sha256 (the text itself is in the ledger, `factory show`). */
export function answerId(answer: string): string {
  return createHash("sha256").update(answer).digest("hex").slice(0, 12);
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();
