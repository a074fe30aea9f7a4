import { spawnSync } from "node:child_process";

/**
 * Runs one of the factory's own Python scripts that parse source (with `ast`, `doctest`'s parser: nothing of
 * the parsed files runs) on `input` as JSON, and reads its JSON answer; undefined when python3 cannot run it.
 * Isolated (`-I -S`): no current directory, PYTHONPATH or site packages on its path, so no file of a repository
 * named like a module it imports (`ast.py`, `json.py`) is ever loaded in the factory's own process.
 */
export function parsedByPython<T>(script: string, input: unknown, args: readonly string[] = []): T | undefined {
  const run = spawnSync("python3", ["-I", "-S", "-c", script, ...args], { input: JSON.stringify(input), encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) return undefined;
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    return undefined;
  }
}
