import type { Surface } from "../config/types.js";
import type { Change } from "../git/diff.js";
import { checkoutPathsFrom } from "../git/worktree.js";
import { runCommandGate } from "../gates/command.js";
import type { GateReport } from "../gates/types.js";
import { readsToPutBack, type VerdictTree } from "../gates/verdict-tree.js";
import { checkFilePaths } from "../guards/check-files.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import type { Invariant, Packet } from "../packet/types.js";
import { checkInterrupted, type RunContext } from "./context.js";
import { invariantGate } from "./gates.js";
import { applyVerdictTree, differs } from "./verdict-tree.js";

export interface CheckRun {
  invariant: Invariant & { check: string };
  packet: Packet;
  surface: Surface;
  worktree: string;
  runDir: string;
  /** The packet's planted commit: the tip's versions come from there. */
  from: string;
  /** The packet's change (from..gated commit). */
  changes: readonly Change[];
  planted: readonly string[];
  /** Changed paths, for `{files}`. */
  changed: readonly string[];
  /** The verdict tree the tests ran on, when there is one (a combined tree or a batch has none). */
  tree: VerdictTree | undefined;
  isTest: (path: string) => boolean;
  freshen: () => Promise<void>;
}

/**
 * An invariant's check, ruled by the factory: its command runs like a gate on the verdict tree, with its own
 * files (the script it names, the data beside it, the team's tests) as the tip has them, traced: a file it
 * read that the change edited and did not declare is put back too, and it runs again (a data file named
 * inside `python3 -c "…"` is no name the command line shows).
 */
export async function runInvariantCheck(ctx: RunContext, check: CheckRun): Promise<GateReport> {
  const gate = invariantGate(check.invariant.id, check.invariant.check);
  const fromTip = checkFilePaths({ command: check.invariant.check, surfaceDir: check.surface.dir, changes: check.changes, changedTests: check.packet.changedTests, isTest: check.isTest });
  const once = async (paths: readonly string[]) => {
    await check.freshen();
    if (differs(check.tree)) await applyVerdictTree(check.worktree, check.from, check.tree);
    if (paths.length > 0) await checkoutPathsFrom(check.worktree, check.from, paths);
    try {
      return await runCommandGate({
        gate,
        surface: check.surface,
        worktree: check.worktree,
        changed: check.changed,
        runDir: check.runDir,
        timeoutMs: ctx.config.limits.gateTimeoutMs,
        baseline: undefined,
        signal: ctx.signal,
        trace: true,
        ...sandboxed(ctx, check.worktree, check.surface.network),
      });
    } finally {
      // The gated commit again (what a build gate made before the tests stays): the review reads this tree.
      await check.freshen();
      checkInterrupted(ctx.signal);
    }
  };
  let paths = fromTip;
  let { report, reads } = await once(paths);
  const shown = { putBack: [...(check.tree?.putBack ?? []), ...paths.map((path) => ({ path, why: "read" as const }))], leftOut: [], ownTests: [] };
  const more = reads ? readsToPutBack(shown, reads, { ...check.packet, planted: check.planted, changes: check.changes }).map((entry) => entry.path) : [];
  if (more.length > 0) {
    paths = [...paths, ...more];
    ({ report } = await once(paths));
  }
  const ruling = report.status === "pass" ? "held" : report.status === "fail" ? "violated" : undefined;
  const asAtTip = paths.length > 0 ? ` (run with the tip's ${paths.join(", ")}: the change edits what the check is made of)` : "";
  return { ...report, summary: `${ruling ? `${ruling}: its check ${report.status === "pass" ? "passed" : report.summary}` : report.summary}${asAtTip}` };
}
