// Where `python3` on PATH is a version manager's shim and not the interpreter
// (pyenv's is a bash script that runs `pyenv exec`: 0.3 s more for every
// Python start on the development VM), the interpreter's own directory goes
// first on PATH: the same python3 and pytest the shim picks for a directory
// without a version file, at the interpreter's own start-up cost. Used by the
// test suite (test/setup/python-path.ts) and bench/overhead.mjs, so pytest
// gates are timed and run as on a machine without a shim.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

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

// Each pytest session loads every plugin installed beside the interpreter.
// The development VM's Python carries hypothesis and pytest-benchmark,
// whose plugins take 1.3 s of a 1.6 s start of pytest; no test of the
// suite uses them, and a tests gate starts pytest several times a packet.
// Wrappers named like the interpreter's programs turn exactly those
// plugins off (`-p no:NAME` for each `pytest11` entry point installed now)
// and start the real program: a plugin a test's candidate tree brings in
// through its own entry point still loads, as it would for a user.
const WRAPPED = ["python3", "python", "pytest", "py.test"];

/**
 * Puts wrappers first on process.env.PATH in a new directory under `parent`
 * that start python3, python and pytest with the installed pytest plugins
 * off; returns the directory (the caller removes it) and the plugins, or
 * undefined when no plugin is installed.
 */
export function installedPytestPluginsOff(parent) {
  const listed = spawnSync("python3", ["-c", "import importlib.metadata as m\nfor e in sorted({e.name for e in m.entry_points(group='pytest11')}): print(e)"], { encoding: "utf8" });
  const plugins = listed.status === 0 ? listed.stdout.split("\n").filter((name) => /^[\w.-]+$/.test(name)) : [];
  if (plugins.length === 0) return undefined;
  const dir = mkdtempSync(join(parent, "factory-test-python-"));
  const off = plugins.map((name) => `-p no:${name}`).join(" ");
  for (const name of WRAPPED) {
    const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
    const real = found.status === 0 ? found.stdout.trim() : "";
    if (!real.startsWith("/")) continue;
    const wrapper = join(dir, name);
    const quoted = `'${real.replaceAll("'", `'\\''`)}'`;
    writeFileSync(wrapper, `#!/bin/sh\nPYTEST_ADDOPTS="${off}\${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}" exec ${quoted} "$@"\n`);
    chmodSync(wrapper, 0o755);
  }
  process.env.PATH = `${dir}${delimiter}${process.env.PATH ?? ""}`;
  return { dir, plugins };
}
