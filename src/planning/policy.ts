import type { AssessmentPolicy } from "../config/types.js";
import type { Packet } from "../packet/types.js";

/** A packet's newest ruling on record: the version it was made on, and what it was. */
export interface RulingOnRecord {
  sha256: string;
  ruling: string;
}

/** Pure: the tier from which on `require_assessment = "advanced"` applies: the tier named "advanced", else the strongest. */
export function advancedTier(tiers: readonly string[]): string | undefined {
  return tiers.includes("advanced") ? "advanced" : tiers.at(-1);
}

/** Pure: whether the policy asks for a ruling on a packet of this tier (tiers weakest first). */
export function needsAssessment(policy: AssessmentPolicy, tiers: readonly string[], tier: string): boolean {
  if (policy === "none") return false;
  if (policy === "all") return true;
  const from = tiers.indexOf(advancedTier(tiers) ?? "");
  return from >= 0 && tiers.indexOf(tier) >= from;
}

/**
 * Pure: the packets the policy refuses, each with why and the command that
 * helps: one without a ruling, one whose ruling is of an older version of
 * it (a changed packet needs a new ruling), one ruled `recut` or `reject`.
 */
export function assessmentRefusals(input: {
  packets: readonly Packet[];
  tiers: readonly string[];
  policy: AssessmentPolicy;
  ruling: (id: string) => RulingOnRecord | undefined;
}): { packet: Packet; problem: string }[] {
  const rule = `[planning] require_assessment = "${input.policy}"`;
  return input.packets.flatMap((packet) => {
    if (!needsAssessment(input.policy, input.tiers, packet.tier)) return [];
    const on = input.ruling(packet.id);
    const problem = !on
      ? `${packet.id} has no assessment, and ${rule} asks for a ready one; \`factory assess ${packet.id}\` rules on it`
      : on.sha256 !== packet.sha256
        ? `${packet.id} was assessed (${on.ruling}) on an older version of the packet; \`factory assess ${packet.id}\` rules on this one`
        : on.ruling !== "ready"
          ? `${packet.id} was assessed "${on.ruling}" (\`factory show ${packet.id}\` has the findings); change the packet and \`factory assess ${packet.id}\` again`
          : undefined;
    return problem ? [{ packet, problem }] : [];
  });
}
