import type { Config } from "../config/types.js";
import { baseEnv, describeOutcome, runCommand } from "../process/run.js";

/** Runs `[notify] command` with a JSON summary on stdin; a failing notifier is reported, never fatal. */
export async function notify(root: string, config: Config, summary: Record<string, unknown>): Promise<string | undefined> {
  if (!config.notify.command) return undefined;
  const outcome = await runCommand({
    command: config.notify.command,
    cwd: root,
    env: baseEnv(),
    input: `${JSON.stringify(summary)}\n`,
    timeoutMs: 60_000,
  });
  if (outcome.kind === "exited" && outcome.code === 0) return undefined;
  return `the notify command ${describeOutcome(outcome)}`;
}
