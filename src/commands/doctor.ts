import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import type { ProofLine } from "../doctor/probes.js";
import { paint, type Output } from "../log/output.js";
import { Interrupted, RUNS_DIR } from "../loop/context.js";
import { proveGuards, type ProofContext } from "../loop/guard-proof.js";
import { preflight } from "../loop/preflight-checks.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspace } from "./workspace.js";

export interface DoctorOptions {
  cwd: string;
  /** Also ask each tier's model one tiny question (what `run` does; it costs a little). */
  models: boolean;
  /** Prove the guards armed in a scratch worktree (runs each tests gate's suite four times). */
  guards: boolean;
  output: Output;
  signal: AbortSignal;
}

/** `factory doctor`: every check `run` makes before it claims anything, one line each; exit 1 when any fails. */
export async function doctor(options: DoctorOptions): Promise<ExitCode> {
  const { output } = options;
  const load = await loadWorkspace(options.cwd);
  if (!load.ok || load.workspace.problems.length > 0 || !load.workspace.config) {
    for (const problem of load.ok ? load.workspace.problems : load.problems) output.err(formatProblem(problem));
    output.err("factory doctor: fix the problems above first (`factory lint` lists them).");
    return EXIT.invalid;
  }
  const { workspace } = load;
  for (const warning of workspace.warnings) output.err(`warning: ${warning}`);
  const checked = await preflight({
    root: workspace.root, config: workspace.config as NonNullable<typeof workspace.config>, tip: workspace.tip, packets: workspace.queue.packets, models: options.models,
  });
  for (const check of checked.checks) {
    output.out(check.problem ? `${paint(output, "red", "FAIL")}  ${check.what}\n      ${check.problem}` : `${paint(output, "green", "ok")}    ${check.what}`);
  }
  if (!options.models) output.out("-     models not asked (--no-models)");
  const failed = checked.checks.filter((check) => check.problem).length;
  output.out(failed ? `\n${failed} check(s) failed: \`factory run\` would refuse.` : "\nAll checks pass.");
  if (failed) return EXIT.halted;
  if (!options.guards) {
    output.out("Guards not proven (--no-guards).");
    return EXIT.ok;
  }
  return proveAndPrint({ root: workspace.root, config: workspace.config as NonNullable<typeof workspace.config>, signal: options.signal }, workspace.tip, output);
}

async function proveAndPrint(ctx: ProofContext, tip: string, output: Output): Promise<ExitCode> {
  output.out(`\nProving the guards in a scratch worktree of ${tip.slice(0, 10)} (each tests gate runs the suite four times):`);
  const runDir = join(ctx.root, RUNS_DIR, "doctor");
  rmSync(runDir, { recursive: true, force: true });
  let lines: ProofLine[];
  try {
    lines = await proveGuards(ctx, { tip, surfaces: ctx.config.surfaces, runDir });
  } catch (error) {
    if (error instanceof Interrupted) return EXIT.interrupted;
    throw error;
  }
  for (const line of lines) {
    if (line.notArmed) output.out(`${paint(output, "red", "NOT ARMED")}  ${line.what}\n           ${line.notArmed}`);
    else if (line.unproven) output.out(`${paint(output, "yellow", "unproven")}   ${line.what}\n           ${line.unproven}`);
    else output.out(`${paint(output, "green", "armed")}      ${line.what}`);
  }
  const notArmed = lines.filter((line) => line.notArmed).length;
  output.out(notArmed ? `\n${notArmed} guard(s) NOT ARMED: a packet could pass them without doing the work (logs: ${relative(ctx.root, runDir)}).` : "\nEvery guard proven here is armed.");
  return notArmed ? EXIT.halted : EXIT.ok;
}
