#!/usr/bin/env node
// A `ruff` command for the tests, on ruff's own checker and formatter (the npm package
// @astral-sh/ruff-wasm-nodejs: ruff compiled to WebAssembly; ruff itself has no Debian package).
// It does what the factory's presets ask of ruff, with ruff's exit codes:
//   ruff check [files…]            findings as `path:row:col: CODE message`; exit 1 when any, else 0
//   ruff format --check [files…]   `Would reformat: path`; exit 1 when any file would change, else 0
//   ruff format --diff [files…]    likewise (the lines that would change are not printed)
//   ruff format [files…]           rewrites the files that would change
//   ruff --version
// With no files, every *.py under the current directory (not hidden, not in node_modules or a venv).
// Settings: `[tool.ruff]` of pyproject.toml, or ruff.toml / .ruff.toml, in the current directory;
// without a `lint.select`, ruff's default rules (E4, E7, E9, F). Anything else: exit 2.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { PositionEncoding, Workspace } from "@astral-sh/ruff-wasm-nodejs";
import { parse } from "smol-toml";

const [command, ...rest] = process.argv.slice(2);
if (command === "--version" || command === "version") {
  console.log(`ruff ${Workspace.version()} (wasm)`);
  process.exit(0);
}
const flags = rest.filter((arg) => arg.startsWith("-"));
const files = rest.filter((arg) => !arg.startsWith("-"));
const known = { check: [], format: ["--check", "--diff"] };
if (!(command in known) || flags.some((flag) => !known[command].includes(flag))) {
  console.error(`ruff (test wrapper): unsupported arguments: ${process.argv.slice(2).join(" ")}`);
  process.exit(2);
}

let workspace;
try {
  workspace = new Workspace(settings(), PositionEncoding.Utf16);
} catch (error) {
  console.error(`ruff failed: invalid settings: ${error}`);
  process.exit(2);
}

const targets = files.length > 0 ? files : pythonFiles(".");
let failing = 0;
for (const file of targets) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    console.error(`error: Failed to read ${file}: ${error.message}`);
    process.exit(2);
  }
  if (command === "check") {
    for (const finding of workspace.check(text)) {
      failing++;
      console.log(`${file}:${finding.start_location.row}:${finding.start_location.column}: ${finding.code ?? "syntax-error"} ${finding.message}`);
    }
    continue;
  }
  let formatted;
  try {
    formatted = workspace.format(text);
  } catch (error) {
    console.error(`error: Failed to parse ${file}: ${error}`);
    process.exit(2);
  }
  if (formatted === text) continue;
  failing++;
  if (flags.length > 0) console.log(`Would reformat: ${file}`);
  else writeFileSync(file, formatted);
}
if (command === "check") {
  console.log(failing ? `Found ${failing} error${failing === 1 ? "" : "s"}.` : "All checks passed!");
  process.exit(failing ? 1 : 0);
}
if (flags.length > 0) {
  console.log(`${failing} file${failing === 1 ? "" : "s"} would be reformatted, ${targets.length - failing} already formatted`);
  process.exit(failing ? 1 : 0);
}
console.log(`${failing} file${failing === 1 ? "" : "s"} reformatted, ${targets.length - failing} left unchanged`);

function settings() {
  let options = {};
  if (existsSync("ruff.toml")) options = parse(readFileSync("ruff.toml", "utf8"));
  else if (existsSync(".ruff.toml")) options = parse(readFileSync(".ruff.toml", "utf8"));
  else if (existsSync("pyproject.toml")) options = parse(readFileSync("pyproject.toml", "utf8")).tool?.ruff ?? {};
  return { ...options, lint: { select: ["E4", "E7", "E9", "F"], ...(options.lint ?? {}) } };
}

function pythonFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || ["node_modules", "venv", "__pycache__"].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...pythonFiles(path));
    else if (entry.name.endsWith(".py")) found.push(relative(".", path));
  }
  return found.sort();
}
