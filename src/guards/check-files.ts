import { dirname, posix } from "node:path";
import { matchesAny } from "../gates/paths.js";
import type { Change } from "../git/diff.js";
import { shellWords } from "../process/shell-words.js";
import { isTestPath } from "./tamper.js";

/**
 * An invariant's `check` is the team's executable ruling (issue 38 §3): the files it is made of come from
 * the tip, not from the candidate. Of what the candidate changed (not added), these run as the tip has
 * them: a file the check's command names (`scripts/check_add.py`, `tests/test_x.py::test_y`), any file
 * beside one it names (the data a check script reads next to it), and any test file or test data (under
 * `tests/`, `test/`, …) the packet does not declare changed on purpose in `changed_tests`. The candidate's
 * source is what the check judges; its edits to the judge are put back.
 */
export function checkFilePaths(input: { command: string; surfaceDir: string; changes: readonly Change[]; changedTests: readonly string[]; isTest?: (path: string) => boolean }): string[] {
  const isTest = input.isTest ?? isTestPath;
  const named = namedPaths(input.command, input.surfaceDir);
  // Beside a named file in a directory of its own (checks/, scripts/): never the surface's root, where the source may be.
  const besideNamed = new Set(named.map((path) => dirname(path)).filter((dir) => dir !== "." && dir !== input.surfaceDir));
  return input.changes
    .filter((change) => change.kind !== "added")
    .map((change) => change.path)
    .filter((path) => named.includes(path) || besideNamed.has(dirname(path)) || (isTest(path) && !matchesAny(path, input.changedTests)))
    .sort();
}

/** What a file named without a directory ends with (`check.py`), unlike a module (`-m pkg.check`). */
const FILE_ENDINGS = /\.(py|js|mjs|cjs|ts|mts|sh|json|csv|txt|toml|ya?ml)$/;

/** Pure: the repository paths a command line's relative words name (a pytest node id's file part too), from the surface's directory. */
export function namedPaths(command: string, surfaceDir: string): string[] {
  const words = (shellWords(command) ?? []).filter((word) => !word.operator && !word.text.startsWith("-") && !word.text.startsWith("/") && !word.text.includes("{"));
  const paths = words
    .map((word) => word.text.split("::")[0] ?? "")
    .filter((text) => !/^[A-Za-z_]\w*=/.test(text) && (text.includes("/") || FILE_ENDINGS.test(text)))
    .map((text) => posix.normalize(posix.join(surfaceDir === "." ? "" : surfaceDir, text)))
    .filter((path) => path !== "." && !path.startsWith(".."));
  return [...new Set(paths)];
}

/** Programs that run a script file named after their options. */
const INTERPRETERS = new Set(["python", "python3", "node", "bash", "sh", "zsh", "dash", "ruby", "perl", "php", "tsx", "ts-node", "bun", "deno", "Rscript", "pwsh"]);
/** Options after which an interpreter reads no script (a module, inline code, a syntax check). */
const NO_SCRIPT = new Set(["-m", "-c", "-e", "--eval", "-p", "--print", "--check", "--version"]);

/**
 * Pure: the repository paths of the scripts a command line executes (issue 55 §2: a gate's own script runs as
 * the tip has it): a relative path in a command's place (`./scripts/check.sh`, `scripts/contract`), or the
 * first non-option word after an interpreter (`python3 scripts/contract.py`, `node tools/verify.mjs`); not a
 * file an interpreter only checks or a tool reads (`node --check src/calc.js`, `mypy pkg/`: those are the work).
 */
export function executedScripts(command: string, surfaceDir: string): string[] {
  const words = shellWords(command) ?? [];
  const scripts: string[] = [];
  let commandPlace = true;
  for (let at = 0; at < words.length; at++) {
    const word = words[at] as (typeof words)[number];
    if (word.operator) {
      commandPlace = true;
      continue;
    }
    if (!commandPlace) continue;
    if (!word.quotedStart && /^[A-Za-z_]\w*=/.test(word.text)) continue; // an assignment before the command
    commandPlace = false;
    const name = word.text.split("/").at(-1) ?? "";
    if (!word.text.startsWith("/") && word.text.includes("/") && !INTERPRETERS.has(name)) {
      scripts.push(word.text);
      continue;
    }
    if (!INTERPRETERS.has(name.replace(/\d+(\.\d+)*$/, "")) && !INTERPRETERS.has(name)) continue;
    for (let next = at + 1; next < words.length; next++) {
      const argument = words[next] as (typeof words)[number];
      if (argument.operator || NO_SCRIPT.has(argument.text)) break;
      if (argument.text.startsWith("-")) continue;
      if (!argument.text.startsWith("/")) scripts.push(argument.text);
      break;
    }
  }
  return [...new Set(scripts.map((text) => posix.normalize(posix.join(surfaceDir === "." ? "" : surfaceDir, text))).filter((path) => path !== "." && !path.startsWith("..")))];
}
