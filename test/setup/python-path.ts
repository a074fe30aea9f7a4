import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { delimiter, dirname } from "node:path";

/**
 * Where `python3` on PATH is a version manager's shim and not the interpreter
 * (pyenv's is a bash script that runs `pyenv exec`: 0.3 s more for every
 * Python start on the development VM, where a tests gate starts pytest many
 * times per test), the interpreter's own directory goes first on PATH for
 * the whole suite: the same python3 and pytest the shim would pick for a
 * directory without a version file (the test repositories have none), at
 * its own start-up cost. Nothing changes where python3 is the interpreter,
 * or missing (the tests that need pytest skip, saying why).
 */
export default function setup(): void {
  const which = spawnSync("sh", ["-c", "command -v python3"], { encoding: "utf8" });
  const found = which.status === 0 ? which.stdout.trim() : "";
  if (!found) return;
  const asked = spawnSync(found, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const executable = asked.status === 0 ? asked.stdout.trim() : "";
  if (!executable || realpathSync(executable) === realpathSync(found)) return;
  process.env.PATH = `${dirname(executable)}${delimiter}${process.env.PATH ?? ""}`;
  console.log(`tests: python3 on PATH is a shim (${found}); ${dirname(executable)} goes first on PATH`);
}
