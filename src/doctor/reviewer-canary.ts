import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reviewerPrompt } from "../agents/prompt.js";
import { parseJsonFile } from "../agents/result.js";
import type { AgentAdapter } from "../agents/types.js";
import { diffText } from "../git/diff.js";
import { commitPaths, createWorktree, removeWorktree } from "../git/worktree.js";
import { callOutsideRun } from "../loop/agent-call.js";
import { checkInterrupted, type RunContext, worktreesDir } from "../loop/context.js";
import { plant } from "../loop/prepare.js";
import { REVIEW_OUTPUT } from "../loop/review.js";
import type { Packet } from "../packet/types.js";
import { mutationSites, sourceOf } from "../planning/mutants.js";
import { validateReview } from "../review/contract.js";

/** One reviewer tier's canary review: what it ruled on a packet with no implementation. */
export interface CanaryResult {
  tier: string;
  /** Invariants it ruled held, though nothing implements them: rubber-stamping when any. */
  held: string[];
  violated: number;
  unverifiable: number;
  /** The call failed or its review was unusable. */
  problem?: string;
  /** What the call spent (reported, or the tier's estimate when unknown); absent when no call was made. */
  spend?: { agent: string; model: string; costUsd?: number; estimatedUsd?: number };
}

/**
 * `factory doctor --reviewer`: each reviewer tier reviews `packet` as an
 * implementer who did nothing would hand it in (the tip with the planted
 * files only), in a scratch worktree, with the same prompt and sandbox as in
 * a run. A tier that rules any invariant `held` there would pass work that is
 * not done. One review call per tier; what each costs is returned for the ledger.
 */
export async function reviewerCanary(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { tip: string; packet: Packet; tiers: readonly string[]; adapters: ReadonlyMap<string, AgentAdapter>; runDir: string },
): Promise<CanaryResult[]> {
  const { packet } = input;
  const worktree = join(worktreesDir(ctx.root), `_canary-${process.pid}`);
  await createWorktree(ctx.root, { path: worktree, start: input.tip });
  try {
    const planted = await plant(ctx, worktree, packet, input.tip);
    const diff = await diffText(worktree, input.tip, planted.commit);
    return await reviewEach(ctx, { ...input, worktree, prompt: reviewerPrompt({ packet, diff, gates: [], outputPath: REVIEW_OUTPUT }), name: "canary" });
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/**
 * `factory doctor --reviewer`, on a landed packet whose planted tests
 * killed a mutant of its code (planning/mutants.ts): each reviewer tier
 * reviews the packet's change with that mutant in it. The tests show the
 * change broken; a tier that still rules every invariant `held` is
 * rubber-stamping. Undefined when the mutant cannot be made again (the
 * mutator changed since it was recorded).
 */
export async function mutantCanary(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { packet: Packet; commit: string; mutant: { file: string; line: number; description: string }; tiers: readonly string[]; adapters: ReadonlyMap<string, AgentAdapter>; runDir: string },
): Promise<CanaryResult[] | undefined> {
  const { packet } = input;
  const worktree = join(worktreesDir(ctx.root), `_canary-${process.pid}`);
  await createWorktree(ctx.root, { path: worktree, start: input.commit });
  try {
    const made = (await mutationSites(worktree, input.commit, packet)).find(
      (site) => site.file === input.mutant.file && site.line === input.mutant.line && site.description === input.mutant.description,
    );
    const source = made && (await sourceOf(made));
    if (!made || source === undefined) return undefined;
    writeFileSync(join(worktree, made.file), source);
    const broken = await commitPaths(worktree, [made.file], `factory doctor: a mutant of ${packet.id} its tests kill`);
    const diff = await diffText(worktree, `${input.commit}^`, broken);
    return await reviewEach(ctx, { ...input, worktree, prompt: reviewerPrompt({ packet, diff, gates: [], outputPath: REVIEW_OUTPUT }), name: "mutant-canary" });
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/** One review call per tier of `prompt` in `worktree`, with the same sandbox as in a run; what each ruled and spent. */
async function reviewEach(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: { packet: Packet; worktree: string; prompt: string; name: string; tiers: readonly string[]; adapters: ReadonlyMap<string, AgentAdapter>; runDir: string },
): Promise<CanaryResult[]> {
  const { packet, worktree, prompt } = input;
  const results: CanaryResult[] = [];
  for (const name of input.tiers) {
    checkInterrupted(ctx.signal);
    const tier = ctx.config.tiers.find((candidate) => candidate.name === name);
    const adapter = tier ? input.adapters.get(tier.agent) : undefined;
    if (!tier || !adapter) {
      results.push({ tier: name, held: [], violated: 0, unverifiable: 0, problem: `tier "${name}" has no agent with an adapter` });
      continue;
    }
    const runDir = join(input.runDir, `${input.name}-${name}`);
    mkdirSync(runDir, { recursive: true });
    const outputPath = join(worktree, REVIEW_OUTPUT);
    rmSync(outputPath, { force: true });
    const { outcome, spend } = await callOutsideRun(ctx, { adapter, tier, role: "reviewer", packet: packet.id, prompt, worktree, runDir, output: REVIEW_OUTPUT, home: join(runDir, "home") });
    checkInterrupted(ctx.signal);
    const cost = spend ? { spend } : {};
    if (outcome.status !== "ok") {
      results.push({ tier: name, held: [], violated: 0, unverifiable: 0, ...cost, problem: `the review call ended ${outcome.status}${outcome.detail ? `: ${outcome.detail}` : ""}` });
      continue;
    }
    const json = existsSync(outputPath) ? parseJsonFile(readFileSync(outputPath, "utf8")) : undefined;
    const check = validateReview(json, packet.id, packet.invariants);
    if (!check.ok) {
      results.push({ tier: name, held: [], violated: 0, unverifiable: 0, ...cost, problem: `its review is unusable: ${check.errors.join("; ")}` });
      continue;
    }
    const rulings = check.review.invariants;
    results.push({
      tier: name,
      ...cost,
      held: rulings.filter((ruling) => ruling.status === "held").map((ruling) => ruling.id),
      violated: rulings.filter((ruling) => ruling.status === "violated").length,
      unverifiable: rulings.filter((ruling) => ruling.status === "unverifiable").length,
    });
  }
  return results;
}
