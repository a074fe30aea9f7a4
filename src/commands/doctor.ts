import { paint, type Output } from "../log/output.js";
import { preflight } from "../loop/preflight-checks.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspace } from "./workspace.js";

export interface DoctorOptions {
  cwd: string;
  /** Also ask each tier's model one tiny question (what `run` does; it costs a little). */
  models: boolean;
  output: Output;
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
  return failed ? EXIT.halted : EXIT.ok;
}
