import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { installedPytestPluginsOff, interpreterFirstOnPath } from "../../scripts/python-path.mjs";

/**
 * The whole suite runs Python as a machine without a version manager's shim
 * would (see scripts/python-path.mjs): a tests gate starts pytest several
 * times per packet. For the same reason the pytest plugins installed beside
 * the interpreter, which no test uses, are off (a plugin a test's own tree
 * brings in still loads). Nothing changes where python3 is the interpreter
 * and no plugin is installed, or where python3 is missing (the tests that
 * need pytest skip, saying why).
 */
export default function setup(): () => void {
  const first = interpreterFirstOnPath();
  if (first) console.log(`tests: python3 on PATH is a shim; ${first} goes first on PATH`);
  const off = installedPytestPluginsOff(tmpdir());
  if (off) console.log(`tests: the installed pytest plugins ${off.plugins.join(", ")} are off (wrappers in ${off.dir} go first on PATH)`);
  return () => {
    if (off) rmSync(off.dir, { recursive: true, force: true });
  };
}
