import { ForgeError, forgeOf } from "../forge/github.js";
import { pullBody } from "../forge/pull-body.js";
import type { GateReport } from "../gates/types.js";
import { gitTry } from "../git/repo.js";
import { type RunContext, taskBranch } from "../loop/context.js";
import type { Packet } from "../packet/types.js";

export type Opened = { kind: "in-review"; number: number; url: string; branch: string; head: string; tree: string; base: string } | { kind: "environment-error"; reason: string };

/**
 * Pull-request mode (`[target] mode = "pull-request"`): the gated, reviewed
 * squash commit (the tip as its parent) is pushed as the packet's branch on
 * the remote, and a pull request is opened for it, or the open one updated
 * (a later attempt pushes to the same branch). Nothing lands here: the PR's
 * merge is recorded when the forge says it happened (loop/reviews.ts).
 */
export async function openForReview(
  ctx: RunContext,
  input: { packet: Packet; attempt: number; squash: string; tree: string; base: string; message: string; gates: readonly GateReport[] },
): Promise<Opened> {
  const remote = ctx.config.target.remote;
  const forgeConfig = ctx.config.forge;
  if (!remote || !forgeConfig) return { kind: "environment-error", reason: "pull-request mode needs [target] remote and a [forge] table" };
  const branch = taskBranch(input.packet.id);
  // The packet's branch on the remote is the factory's own: each attempt's squash replaces the last.
  const pushed = await gitTry(ctx.root, ["push", "--porcelain", "--no-verify", "--force", remote, `${input.squash}:refs/heads/${branch}`]);
  if (!pushed.ok) return { kind: "environment-error", reason: `${remote} refused the push of ${branch}: ${pushed.message.trim().split("\n").slice(-3).join(" / ")}` };
  const { state } = await ctx.ledger.history();
  const history = state.packets.get(input.packet.id);
  const review = history?.events.findLast((event) => event.kind === "review-recorded" && event.attempt === input.attempt);
  const rulings = review?.kind === "review-recorded" ? (review.rulings ?? []) : [];
  const { title, body } = pullBody({ packet: input.packet, attempt: input.attempt, gates: input.gates, rulings, costUsd: history?.costUsd ?? 0, message: input.message });
  const forge = forgeOf(forgeConfig, process.env, ctx.signal);
  try {
    const open = await forge.openPullFrom(branch, ctx.branch);
    const pull = open ? await forge.updatePull(open.number, { title, body }) : await forge.createPull({ head: branch, base: ctx.branch, title, body });
    return { kind: "in-review", number: pull.number, url: pull.html_url, branch, head: input.squash, tree: input.tree, base: input.base };
  } catch (error) {
    if (!(error instanceof ForgeError)) throw error;
    return { kind: "environment-error", reason: `opening the pull request for ${branch}: ${error.message}` };
  }
}
