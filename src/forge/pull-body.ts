import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";
import { markdownInert } from "../util/inert-text.js";

export interface PullFacts {
  packet: Pick<Packet, "id" | "goal" | "file" | "invariants">;
  attempt: number;
  gates: readonly Pick<GateReport, "name" | "status" | "summary">[];
  rulings: readonly { id: string; status: string; evidence?: string }[];
  costUsd: number;
  /** The squash commit's message: its trailers go into the merge, so the target's history names the packet. */
  message: string;
}

/** Pure: a pull request's title and body: the packet, each invariant's ruling with its evidence, the gate table, the cost. */
export function pullBody(facts: PullFacts): { title: string; body: string } {
  const { packet } = facts;
  const rulings = new Map(facts.rulings.map((ruling) => [ruling.id, ruling]));
  const invariants = packet.invariants.map((invariant) => {
    const ruling = rulings.get(invariant.id);
    const evidence = ruling?.evidence ? ` — \`${ruling.evidence.replaceAll("`", "'").replaceAll("\n", " ")}\`` : "";
    return `| \`${invariant.id}\` | ${cell(invariant.assert)} | ${ruling?.status ?? "not ruled"}${evidence} |`;
  });
  const gates = facts.gates.map((gate) => `| ${cell(gate.name)} | ${gate.status} | ${cell(gate.summary)} |`);
  const body = [
    `Packet **${packet.id}** (\`${packet.file}\`), attempt ${facts.attempt}: gated and reviewed by the factory before this pull request was opened.`,
    "",
    "### Invariants",
    "",
    "| id | asserts | ruling |",
    "| --- | --- | --- |",
    ...invariants,
    "",
    "### Gates (run by the factory)",
    "",
    "| gate | result | summary |",
    "| --- | --- | --- |",
    ...gates,
    "",
    `Cost so far: $${facts.costUsd.toFixed(2)}.`,
    "",
    "<details><summary>Squash commit message</summary>",
    "",
    "```",
    facts.message.trim(),
    "```",
    "</details>",
  ].join("\n");
  return { title: packet.goal, body };
}

/** A table cell: one line, no column break, and inert (gate summaries name tests the agent may have written). */
export function cell(text: string): string {
  return markdownInert(text).replaceAll("|", "\\|").replaceAll("\n", " ");
}
