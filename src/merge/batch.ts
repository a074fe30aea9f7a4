import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Surface } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import { type GateReport, isGreen } from "../gates/types.js";
import { gitRun, gitTry, resolveCommit } from "../git/repo.js";
import { createWorktree, removeWorktree } from "../git/worktree.js";
import { measureBaseline } from "../loop/baseline.js";
import { checkInterrupted, type RunContext, surfaceOf, worktreesDir } from "../loop/context.js";
import { runGates } from "../loop/gates.js";
import { installSurface } from "../loop/prepare.js";
import { recordReruns } from "../loop/reruns.js";
import type { CoveredTree, LandInput } from "./land-input.js";

/**
 * A merge batch (issue 24): several gated attempts waiting to land, combined
 * onto the tip one after another and gated once on the whole combination
 * against the tip's own baseline, where one at a time each would re-gate its
 * own combination with the suite. Green, every prefix of the combination is
 * covered: each packet then lands through its own `land()`, in order, with
 * its own compare-and-swap, squash and trailers, and skips its re-gate when
 * its work brought up to the tip is exactly the covered tree (anything else —
 * the tip moved meanwhile, a merge that came out differently — takes the
 * usual re-gate, so a batch can only save work, never skip a check). Red,
 * the first prefix that breaks is found by bisection (one gating of a
 * shorter prefix per step): the prefixes before it are covered and land,
 * its last member (the culprit) is sent back with the failure of that
 * combination, and the members after it wait for the next landing, where
 * they are gated again without it. No packet is blamed for another's
 * breakage: the culprit's prefix is green without it.
 */
export interface BatchVerdict {
  covered: Map<string, CoveredTree>;
  green: boolean;
  /** Red: the first combination that breaks, by its tree, with its gates' reports (its last member's landing there fails with them). */
  broken?: { tree: string; packet: string; reports: GateReport[]; packets: string[] };
  /** Red: the members after the culprit, to land later without it. */
  deferred: string[];
}

/** One member's place in the combination: its commit on top of the previous one, and that commit's tree. */
interface Prefix {
  input: LandInput;
  commit: string;
  tree: string;
}

/**
 * Combines the members onto `tip` in order, each merged three-way onto the
 * previous combination (`git merge-tree`, nothing checked out); a member that
 * conflicts is left out (it meets the conflict on its own path).
 */
async function combine(root: string, tip: string, members: readonly LandInput[]): Promise<Prefix[]> {
  const prefixes: Prefix[] = [];
  let previous = tip;
  for (const input of members) {
    const merged = await gitTry(root, ["merge-tree", "--write-tree", "--no-messages", previous, input.commit]);
    const tree = merged.ok ? merged.out.split("\n")[0]?.trim() : undefined;
    if (!tree || !/^[0-9a-f]{40,64}$/.test(tree)) continue;
    const message = `factory: batch, ${input.packet.id} on ${previous.slice(0, 10)}`;
    const commit = (await gitRun(root, ["commit-tree", tree, "-p", previous, "-p", input.commit, "-m", message], { identity: true })).trim();
    prefixes.push({ input, commit, tree });
    previous = commit;
  }
  return prefixes;
}

let scratchCount = 0;

/**
 * Gates the members together, or says nothing (undefined) when there is no
 * batch to gate: fewer than two members of one surface combine cleanly, or
 * the tip's baseline or the scratch checkout cannot be had (each member then
 * lands alone, as before). Runs under the landing lock.
 */
export async function gateBatch(ctx: RunContext, members: readonly LandInput[]): Promise<BatchVerdict | undefined> {
  const first = members[0];
  if (!first || members.length < 2) return undefined;
  const surface = surfaceOf(ctx.config, first.packet);
  if (!surface?.gates.some((gate) => gate.tests)) return undefined; // the batch saves suite runs; without a tests gate there are none
  const tip = await resolveCommit(ctx.root, ctx.branch);
  if (!tip) return undefined;
  const prefixes = await combine(
    ctx.root,
    tip,
    members.filter((input) => input.packet.surface === first.packet.surface),
  );
  const last = prefixes.at(-1);
  if (!last || prefixes.length < 2) return undefined;
  const runDir = join(last.input.runDir, `batch-${tip.slice(0, 10)}`);
  mkdirSync(runDir, { recursive: true });
  const packets = prefixes.map((prefix) => prefix.input.packet.id);
  ctx.emit({ kind: "notice", message: `gating ${packets.join(", ")} together on ${ctx.branch} at ${tip.slice(0, 10)} (a merge batch)` });
  const baseline = await measureBaseline(ctx, { surface, commit: tip, runDir, repairs: prefixes.flatMap((prefix) => prefix.input.packet.repairs) });
  if (!baseline.ok) return undefined;
  /** The first `count` members' combination gated, and recorded. */
  const gate = async (count: number): Promise<Gated | undefined> => {
    const begun = Date.now();
    const shown = prefixes.slice(0, count);
    const reports = await gateInScratch(ctx, { surface, prefixes: shown, baseline: baseline.results, runDir: join(runDir, `prefix-${count}`), tip });
    if (!reports) return undefined;
    const green = isGreen(reports.reports);
    await ctx.ledger.append([
      {
        kind: "batch-gated",
        packets: shown.map((prefix) => prefix.input.packet.id),
        attempts: shown.map((prefix) => prefix.input.attempt),
        tip,
        tree: (shown.at(-1) as Prefix).tree,
        verdict: green ? "green" : "red",
        failed: reports.reports.filter((report) => report.status === "fail" || report.status === "error").map((report) => report.name),
        durationMs: Date.now() - begun,
        run: ctx.owner.run,
      },
    ]);
    return { ...reports, green, count };
  };
  const whole = await gate(prefixes.length);
  if (!whole) return undefined;
  const covered = new Map<string, CoveredTree>();
  const cover = (gated: Gated): void => {
    const shown = prefixes.slice(0, gated.count);
    for (const prefix of shown) covered.set(prefix.tree, { reports: gated.reports, packets: shown.map((one) => one.input.packet.id), ...(prefix === shown.at(-1) ? { tests: gated.tests } : {}) });
  };
  if (whole.green) {
    cover(whole);
    return { covered, green: true, deferred: [] };
  }
  const found = await firstRedPrefix(whole, gate);
  const { greenest } = found;
  if (greenest) cover(greenest);
  // A step could not be gated: nobody is blamed; the members past the green prefix land as they would alone.
  if (!found.red) return { covered, green: false, deferred: [] };
  const red = found.red;
  const culprit = prefixes[red.count - 1] as Prefix;
  ctx.emit({
    kind: "notice",
    packet: culprit.input.packet.id,
    message: `the merge batch is red from ${culprit.input.packet.id} on: ${
      red.count === 1
        ? "it breaks the tip alone"
        : `${prefixes
            .slice(0, red.count - 1)
            .map((prefix) => prefix.input.packet.id)
            .join(", ")} without it are green`
    }`,
  });
  return {
    covered,
    green: false,
    broken: { tree: culprit.tree, packet: culprit.input.packet.id, reports: red.reports, packets: prefixes.slice(0, red.count).map((prefix) => prefix.input.packet.id) },
    deferred: prefixes.slice(red.count).map((prefix) => prefix.input.packet.id),
  };
}

interface Gated {
  reports: GateReport[];
  tests: ReadonlyMap<string, TestResult[]>;
  green: boolean;
  /** How many members, from the first, were combined. */
  count: number;
}

/** The combination's gates, run in a scratch checkout of it (installed as a task worktree is): every command gate once, every member's own runs. */
async function gateInScratch(
  ctx: RunContext,
  input: { surface: Surface; prefixes: Prefix[]; baseline: ReadonlyMap<string, TestResult[]>; runDir: string; tip: string },
): Promise<{ reports: GateReport[]; tests: ReadonlyMap<string, TestResult[]> } | undefined> {
  const [head, ...rest] = input.prefixes.map((prefix) => prefix.input);
  const last = input.prefixes.at(-1);
  if (!head || !last) return undefined;
  const worktree = join(worktreesDir(ctx.root), `_batch-${input.tip.slice(0, 12)}-${process.pid}-${++scratchCount}`);
  await createWorktree(ctx.root, { path: worktree, start: last.commit });
  try {
    const installError = await installSurface(ctx, worktree, input.surface, input.runDir);
    checkInterrupted(ctx.signal);
    if (installError) return undefined;
    const gated = await runGates(ctx, {
      packet: head.packet,
      attempt: head.attempt,
      surface: input.surface,
      worktree,
      plantedCommit: head.plantedCommit,
      planted: head.planted,
      plantedCases: head.plantedCases,
      baseline: input.baseline,
      tip: input.tip,
      runDir: input.runDir,
      combined: { agentCommit: head.commit, builtins: [] },
      also: rest.map((member) => ({ packet: member.packet, plantedCommit: member.plantedCommit, plantedCases: member.plantedCases, agentCommit: member.commit })),
    });
    await recordReruns(ctx, head.packet.id, head.attempt, gated.reruns);
    return { reports: gated.reports, tests: gated.tests };
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/**
 * Bisection over the prefixes of a red combination: the tip alone is green (its baseline), the whole
 * (`whole`, `count` members) red; each step gates the middle prefix, until a green prefix and a red one
 * one member apart. Returns the longest green prefix gated (none: the first member breaks the tip alone)
 * and the shortest red one, whose last member is the culprit; no `red` when a step could not be gated.
 */
export async function firstRedPrefix<G extends { count: number; green: boolean }>(whole: G, gate: (count: number) => Promise<G | undefined>): Promise<{ greenest: G | undefined; red: G | undefined }> {
  let greenest: G | undefined;
  let red = whole;
  while (red.count - (greenest?.count ?? 0) > 1) {
    const middle = await gate(Math.floor(((greenest?.count ?? 0) + red.count) / 2));
    if (!middle) return { greenest, red: undefined };
    if (middle.green) greenest = middle;
    else red = middle;
  }
  return { greenest, red };
}
