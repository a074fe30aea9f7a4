import { spawn, spawnSync } from "node:child_process";
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

/**
 * The built CLI without blocking this process: for a test whose own servers (a scripted forge, a model)
 * must answer the CLI while it runs. Its process group is killed after `timeoutMs`.
 */
export function runCliAsync(args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [FACTORY_BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
