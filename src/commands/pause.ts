import type { Output } from "../log/output.js";
import { pausedBy } from "../loop/context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonInput, personName, refuseAgents } from "./packet-record.js";
import { loadHeadOrReport } from "./workspace.js";

export interface PauseOptions extends PersonInput {
  cwd: string;
  output: Output;
  env: NodeJS.ProcessEnv;
  /** Also stop the attempts running now (recorded interrupted: not spent). */
  interrupt?: boolean;
}

/**
 * `factory pause`: one switch for every worker of the ledger. No worker
 * claims a packet after it (each looks before every claim, and every few
 * seconds while it runs attempts); with `--interrupt` the running attempts
 * stop too, unspent. Each run then ends, saying who paused it; `factory
 * resume` lifts it.
 */
export async function pause(options: PauseOptions): Promise<ExitCode> {
  return toggle(options, "pause");
}

/** `factory resume`: workers started after it claim again. */
export async function resume(options: PauseOptions): Promise<ExitCode> {
  return toggle(options, "resume");
}

async function toggle(options: PauseOptions, command: "pause" | "resume"): Promise<ExitCode> {
  const { output } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory ${command} refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const head = await loadHeadOrReport(options.cwd, output);
  if (!head) return EXIT.invalid;
  const paused = (await head.ledger.read()).state.paused;
  if (command === "resume" && !paused) {
    output.out(`${head.ledger.where}: not paused; nothing to resume.`);
    return EXIT.ok;
  }
  if (command === "pause" && paused && (paused.interrupt || !options.interrupt)) {
    output.out(`${head.ledger.where}: already ${pausedBy(paused)}${paused.interrupt ? " (running attempts stopped)" : ""}.`);
    return EXIT.ok;
  }
  const action = command === "pause" ? `stop every worker claiming${options.interrupt ? " and stop the running attempts" : ""}` : "let workers claim again";
  if (!(await confirmByPerson(command, command, action, options, output))) return EXIT.invalid;
  const by = await personName(head.root);
  await head.ledger.append([command === "pause" ? { kind: "paused", by, interrupt: Boolean(options.interrupt) } : { kind: "resumed", by }]);
  output.out(
    command === "pause"
      ? `${head.ledger.where}: paused by ${by}. No worker claims a packet now${options.interrupt ? "; running attempts stop within seconds, not spent" : "; running attempts finish"}, and each run then ends. factory resume lifts it.`
      : `${head.ledger.where}: resumed by ${by}; start the workers again (factory run).`,
  );
  return EXIT.ok;
}
