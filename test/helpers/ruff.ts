import { chmodSync, copyFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT = fileURLToPath(new URL("../..", import.meta.url));
/** Inside the project's npm install, so the command finds its packages there, in a sandbox too. */
const BIN = join(PROJECT, "node_modules", ".factory-test-bin");

/**
 * A `ruff` command on ruff's own checker and formatter (test/helpers/ruff-command.mjs over the npm
 * package @astral-sh/ruff-wasm-nodejs, a dev dependency), placed in a directory of its own: that
 * directory, to put first on PATH, or why there is none (the package is not installed).
 */
export function ruffBin(): { dir: string } | { missing: string } {
  try {
    createRequire(join(PROJECT, "package.json")).resolve("@astral-sh/ruff-wasm-nodejs");
  } catch {
    return { missing: "the npm package @astral-sh/ruff-wasm-nodejs is not installed (npm ci installs it)" };
  }
  mkdirSync(BIN, { recursive: true });
  // Each written under a name of its own, then renamed into place: test files in other workers may ask at once.
  const script = join(BIN, `ruff.mjs.${process.pid}`);
  copyFileSync(fileURLToPath(new URL("./ruff-command.mjs", import.meta.url)), script);
  renameSync(script, join(BIN, "ruff.mjs"));
  const launcher = join(BIN, `ruff.${process.pid}`);
  writeFileSync(launcher, `#!/bin/sh\nexec node "${join(BIN, "ruff.mjs")}" "$@"\n`);
  chmodSync(launcher, 0o755);
  renameSync(launcher, join(BIN, "ruff"));
  return { dir: BIN };
}
