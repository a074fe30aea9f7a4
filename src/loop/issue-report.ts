import { forgeOf } from "../forge/github.js";
import { issueOfSpec, labelNames, landedComment } from "../forge/intake.js";
import type { Packet } from "../packet/types.js";
import type { RunContext } from "./context.js";

/**
 * When a packet whose spec came from an issue (`factory intake`) lands: a comment on the issue with the
 * commit, the gates, the rulings and the cost, and the issue closed when it carries `[forge] close_label`.
 * The landing is recorded before this runs; a forge that fails is said, never undoes or stops anything.
 */
export async function reportToIssue(ctx: Pick<RunContext, "config" | "ledger" | "branch" | "emit">, packet: Packet, attempt: number, commit: string): Promise<void> {
  const number = issueOfSpec(packet.specPath);
  const forge = ctx.config.forge;
  if (number === undefined || !forge) return;
  try {
    const record = (await ctx.ledger.history()).state.packets.get(packet.id);
    const events = record?.events ?? [];
    const review = events.findLast((event) => event.kind === "review-recorded" && event.attempt === attempt);
    const gates = events
      .filter((event) => event.kind === "gate-finished" && event.attempt === attempt)
      .map((event) => (event.kind === "gate-finished" ? { name: event.gate, status: event.result } : { name: "", status: "" }));
    const client = forgeOf(forge);
    await client.commentOnIssue(
      number,
      landedComment({
        packet: packet.id,
        goal: packet.goal,
        commit,
        branch: ctx.branch,
        costUsd: record?.costUsd ?? 0,
        rulings: review?.kind === "review-recorded" ? (review.rulings ?? []) : [],
        gates,
      }),
    );
    const labels = labelNames(await client.issue(number));
    if (labels.includes(forge.closeLabel)) await client.closeIssue(number);
    ctx.emit({ kind: "notice", packet: packet.id, message: `commented on issue #${number}${labels.includes(forge.closeLabel) ? ` and closed it (${forge.closeLabel})` : ""}` });
  } catch (error) {
    ctx.emit({ kind: "notice", packet: packet.id, message: `issue #${number} was not told of the landing: ${error instanceof Error ? error.message : String(error)}` });
  }
}
