import type { EventBody, Owner } from "../../src/ledger/events.js";

/** A packet's life as ledger events: registered, claimed, spent, retried, claimed again, merged (six events). */
export function packetLife(packet: string, owner: Owner): EventBody[] {
  return [
    { kind: "packet-registered", packet, sha256: `sha-${packet}`, file: `packets/${packet}.toml` },
    { kind: "claimed", packet, attempt: 1, sha256: `sha-${packet}`, ...owner },
    { kind: "agent-finished", packet, attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.25, durationMs: 5 },
    { kind: "decided", packet, attempt: 1, decision: "retry", reasons: ["tests failed"], feedback: ["fix the test"] },
    { kind: "claimed", packet, attempt: 2, sha256: `sha-${packet}`, ...owner },
    { kind: "merged", packet, attempt: 2, commit: `c-${packet}`, tree: `t-${packet}` },
  ];
}
