import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const FACTORY_BIN = fileURLToPath(new URL("../../bin/factory.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would, colors off; killed after `timeoutMs` (the suite runs three files at a time, so allow for load). */
export function runCli(args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 60_000): CliResult {
  const result = spawnSync(process.execPath, [FACTORY_BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...env },
    timeout: timeoutMs,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
