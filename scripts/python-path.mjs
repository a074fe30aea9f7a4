// Where `python3` on PATH is a version manager's shim and not the interpreter
// (pyenv's is a bash script that runs `pyenv exec`: 0.3 s more for every
// Python start on the development VM), the interpreter's own directory goes
// first on PATH: the same python3 and pytest the shim picks for a directory
// without a version file, at the interpreter's own start-up cost. Used by the
// test suite (test/setup/python-path.ts) and bench/overhead.mjs, so pytest
// gates are timed and run as on a machine without a shim.
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { delimiter, dirname } from "node:path";

/** Puts the interpreter's directory first on process.env.PATH when python3 is a shim; returns that directory, or undefined when nothing changed. */
export function interpreterFirstOnPath() {
  const which = spawnSync("sh", ["-c", "command -v python3"], { encoding: "utf8" });
  const found = which.status === 0 ? which.stdout.trim() : "";
  if (!found) return undefined;
  const asked = spawnSync(found, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const executable = asked.status === 0 ? asked.stdout.trim() : "";
  if (!executable || realpathSync(executable) === realpathSync(found)) return undefined;
  process.env.PATH = `${dirname(executable)}${delimiter}${process.env.PATH ?? ""}`;
  return dirname(executable);
}
