import { posix } from "node:path";
import type { GateConfig, Surface } from "../config/types.js";
import { runCommandGate } from "../gates/command.js";
import { matchesAny } from "../gates/paths.js";
import type { GateReport } from "../gates/types.js";
import { readsToPutBack, type VerdictTree } from "../gates/verdict-tree.js";
import type { Change } from "../git/diff.js";
import { readFileAt } from "../git/repo.js";
import { checkoutPathsFrom, restoreTracked } from "../git/worktree.js";
import { checkFilePaths, executedScripts, namedPaths } from "../guards/check-files.js";
import { sandboxed } from "../guards/sandbox-policy.js";
import type { Invariant, Packet } from "../packet/types.js";
import { checkInterrupted, type RunContext } from "./context.js";
import { invariantGate } from "./invariant-gate.js";
import { applyVerdictTree, differs } from "./verdict-tree.js";

export interface AsAtTipRun {
  gate: GateConfig;
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
  /** Run on the verdict tree (an invariant's check, beside the tests); undefined: on the gated commit (a whole-tree gate). */
  tree: VerdictTree | undefined;
  isTest: (path: string) => boolean;
  /** What must happen before each run (the next tests run starts from the committed tree: guards/runner-state.ts). */
  before: () => Promise<void>;
  /** A gate proven green at the tip finished there: a hang now is the work's. */
  finishedOnBaseline?: boolean;
}

/**
 * A gate whose own files are the team's (issue 55 §2): an invariant's check, or a whole-tree gate such as a
 * `contract` script. It runs with what it is made of as the tip has it — the files its command names (and,
 * for `npm run x`, the script's), the files beside a named one in its own directory, the team's tests — and
 * traced: a data file it read that the change edited and did not declare is put back too, and it runs
 * again (a file named inside `python3 -c "…"` is no name the command line shows). A packet that declares
 * such a file changed (`changed_tests`) is judged by its own version, and when the gate is one it repairs,
 * a person rules on it: the repair must not be a rewrite of the gate itself.
 */
export async function runAsAtTip(ctx: RunContext, run: AsAtTipRun): Promise<{ report: GateReport; putBack: string[] }> {
  const script = await packageScriptOf(run.worktree, run.from, run.surface, run.gate.run);
  const command = script ? `${run.gate.run} ${script}` : run.gate.run;
  const fromTip =
    run.tree === undefined ? gateScriptPaths(run, command) : checkFilePaths({ command, surfaceDir: run.surface.dir, changes: run.changes, changedTests: run.packet.changedTests, isTest: run.isTest });
  const once = async (paths: readonly string[]) => {
    await run.before();
    const moved = differs(run.tree) || paths.length > 0;
    if (differs(run.tree)) await applyVerdictTree(run.worktree, run.from, run.tree);
    if (paths.length > 0) await checkoutPathsFrom(run.worktree, run.from, paths);
    try {
      return await runCommandGate({
        gate: run.gate,
        surface: run.surface,
        worktree: run.worktree,
        changed: run.changed,
        runDir: run.runDir,
        timeoutMs: run.gate.timeoutMs ?? ctx.config.limits.gateTimeoutMs,
        baseline: undefined,
        ...(run.finishedOnBaseline ? { finishedOnBaseline: true } : {}),
        signal: ctx.signal,
        trace: true,
        ...sandboxed(ctx, run.worktree, run.surface.network),
      });
    } finally {
      // The gated commit's tracked files again (what a build gate made stays): the next gate and the review read this tree.
      if (moved) await restoreTracked(run.worktree);
      checkInterrupted(ctx.signal);
    }
  };
  let putBack = fromTip;
  let { report, reads } = await once(putBack);
  const shown = { putBack: [...(run.tree?.putBack ?? []), ...putBack.map((path) => ({ path, why: "read" as const }))], leftOut: [], ownTests: [] };
  const more = reads ? readsToPutBack(shown, reads, { ...run.packet, planted: run.planted, changes: run.changes }).map((entry) => entry.path) : [];
  if (more.length > 0) {
    putBack = [...putBack, ...more];
    ({ report } = await once(putBack));
  }
  const declared = declaredScripts(run, command);
  if (declared.length > 0 && run.packet.repairs.includes(run.gate.name)) {
    report = { ...report, forPerson: `the packet repairs gate "${run.gate.name}" and declares its own ${declared.join(", ")} changed: a person rules whether the repair is the rewrite of the gate` };
  }
  return { report, putBack };
}

/** An invariant's check, ruled by the factory: run as at the tip (runAsAtTip) on the verdict tree; exit 0 holds it. */
export async function runInvariantCheck(ctx: RunContext, check: Omit<AsAtTipRun, "gate"> & { invariant: Invariant & { check: string } }): Promise<GateReport> {
  const { report, putBack } = await runAsAtTip(ctx, { ...check, gate: invariantGate(check.invariant.id, check.invariant.check) });
  const ruling = report.status === "pass" ? "held" : report.status === "fail" ? "violated" : undefined;
  const asAtTip = putBack.length > 0 ? ` (run with the tip's ${putBack.join(", ")}: the change edits what the check is made of)` : "";
  return { ...report, summary: `${ruling ? `${ruling}: its check ${report.status === "pass" ? "passed" : report.summary}` : report.summary}${asAtTip}` };
}

/**
 * A whole-tree gate's own files the change edited: the scripts its command runs (not a file it only checks or
 * reads: that is the work) and the files beside them in their own directory, unless the packet declares them.
 */
function gateScriptPaths(run: AsAtTipRun, command: string): string[] {
  const scripts = executedScripts(command, run.surface.dir);
  const beside = new Set(scripts.map((path) => posix.dirname(path)).filter((dir) => dir !== "." && dir !== run.surface.dir));
  return run.changes
    .filter((change) => change.kind !== "added" && (scripts.includes(change.path) || beside.has(posix.dirname(change.path))))
    .map((change) => change.path)
    .filter((path) => !matchesAny(path, run.packet.changedTests))
    .sort();
}

/** The files a gate's command runs that the change edited and the packet declares changed on purpose. */
function declaredScripts(run: AsAtTipRun, command: string): string[] {
  const named = run.tree === undefined ? executedScripts(command, run.surface.dir) : namedPaths(command, run.surface.dir);
  return run.changes.filter((change) => change.kind !== "added" && named.includes(change.path) && matchesAny(change.path, run.packet.changedTests)).map((change) => change.path);
}

/** For `npm run x`, `npm test`, `pnpm x`, `yarn x`: the text of that script in the tip's package.json of the surface. */
async function packageScriptOf(worktree: string, from: string, surface: Surface, command: string): Promise<string | undefined> {
  const match = /^\s*(?:npm|pnpm|yarn|bun)\s+(?:run(?:-script)?\s+)?([\w:.-]+)/.exec(command);
  const name = match?.[1];
  if (!name) return undefined;
  const manifest = await readFileAt(worktree, from, surface.dir === "." ? "package.json" : `${surface.dir}/package.json`);
  try {
    const scripts = (JSON.parse(manifest ?? "{}") as { scripts?: Record<string, unknown> }).scripts ?? {};
    const text = scripts[name === "t" ? "test" : name];
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}
