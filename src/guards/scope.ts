import { posix } from "node:path";
import { matchesAny } from "../gates/paths.js";
import { builtinReport, type Finding, type GateReport } from "../gates/types.js";
import type { Change } from "../git/diff.js";
import { formatSize } from "../util/size.js";
import { automationPart } from "./automation.js";
import { namesExplicitly } from "./runner-steering.js";
import { addedSecrets } from "./secrets.js";

export interface ScopeInput {
  changes: readonly Change[];
  /** Undefined: no positive scope declared. */
  allowed: readonly string[] | undefined;
  deletable: readonly string[];
  /** Planted files are the untouched gate's business, not scope's. */
  planted: readonly string[];
  /** Sizes of the files in the attempt's tree, and the largest a changed file may be. */
  sizes?: ReadonlyMap<string, number | undefined>;
  maxFileSize?: number;
  /** Targets of the changed paths that are symbolic links. */
  links?: ReadonlyMap<string, string>;
  /** Modes of the files in the attempt's tree: a gitlink (160000) is a nested repository. */
  modes?: ReadonlyMap<string, string>;
  /** Nested repositories found in the worktree before the attempt was committed (never staged). */
  nested?: readonly string[];
  /** The lines the change adds, per file: a secret-shaped one is refused (secrets.ts). */
  added?: readonly { path: string; added: readonly { line: number; text: string }[] }[];
}

/**
 * Every changed path inside allowed_paths when declared; deletions only of deletable_paths; CI and
 * automation configuration only where allowed_paths names it, and then a person rules on it; no
 * secret-shaped string added.
 */
export function checkScope(input: ScopeInput): GateReport {
  const findings: Finding[] = [];
  const automation: string[] = [];
  for (const change of input.changes) {
    if (input.planted.includes(change.path)) continue;
    const part = automationPart(change.path);
    if (part && !namesExplicitly(input.allowed, change.path, part)) {
      findings.push({
        file: change.path,
        message: `${change.kind === "deleted" ? "deletes" : "edits"} CI or automation configuration (${part}), which runs on the forge with its secrets: allowed only where the packet's allowed_paths names it, and then a person rules on it`,
      });
      continue;
    }
    if (part) automation.push(change.path);
    if (change.kind === "deleted") {
      if (!matchesAny(change.path, input.deletable)) {
        findings.push({ file: change.path, message: "deleted, but it is not in deletable_paths" });
      }
      continue;
    }
    if (input.allowed !== undefined && !matchesAny(change.path, input.allowed)) {
      findings.push({ file: change.path, message: `${change.kind} outside allowed_paths` });
    }
    // A name like "--extend-exclude=*.py" would reach a gate's {files} as an option.
    if (change.path.split("/").some((segment) => segment.startsWith("-"))) {
      findings.push({ file: change.path, message: 'a path starting with "-" could pass as an option to a gate command; rename it' });
    }
    // A nested repository carries a config of its own (filters, hooks) that git would run in it as the user.
    if (input.modes?.get(change.path) === "160000") {
      findings.push({ file: change.path, message: "is a nested git repository (a gitlink): an attempt may not add one; remove its .git and commit its files, or drop it" });
    }
    const target = input.links?.get(change.path);
    if (target !== undefined && leavesRepository(change.path, target)) {
      findings.push({ file: change.path, message: `is a symbolic link that leaves the repository (→ ${target})` });
    } else if (target !== undefined && input.modes && !tracks(input.modes, linkTarget(change.path, target))) {
      // What it points at would be there for the gates (left beside the commit) and missing where the commit lands.
      findings.push({ file: change.path, message: `is a symbolic link to ${linkTarget(change.path, target)}, which the commit does not hold: commit what it points at, or drop the link` });
    }
    const size = input.sizes?.get(change.path);
    if (size !== undefined && input.maxFileSize !== undefined && size > input.maxFileSize) {
      findings.push({ file: change.path, message: `is ${formatSize(size)}, over [limits] max_file_size (${formatSize(input.maxFileSize)})` });
    }
  }
  for (const path of input.nested ?? []) {
    findings.push({ file: path, message: "is a nested git repository: an attempt may not make one (its config would run in the factory's git); remove its .git and commit its files, or drop it" });
  }
  findings.push(...addedSecrets(input.added ?? []));
  const report = builtinReport("scope", findings, `${input.changes.length} changed path(s), all in scope`);
  const named = `${automation.slice(0, 3).join(", ")}${automation.length > 3 ? `, and ${automation.length - 3} more` : ""}`;
  return automation.length > 0 ? { ...report, forPerson: `the change edits CI or automation configuration (${named}), which runs on the forge with its secrets: a person rules on it` } : report;
}

/** Pure: the repository path a link at `path` pointing at `target` (relative) names. */
function linkTarget(path: string, target: string): string {
  return posix.normalize(posix.join(posix.dirname(path), target)).replace(/\/$/, "");
}

/** Whether the tree holds `path`: a file or link of its own, or a directory with something tracked under it. */
function tracks(tree: ReadonlyMap<string, string>, path: string): boolean {
  if (path === "." || tree.has(path)) return true;
  for (const entry of tree.keys()) if (entry.startsWith(`${path}/`)) return true;
  return false;
}

/** Whether a link at `path` pointing at `target` resolves outside the repository. */
function leavesRepository(path: string, target: string): boolean {
  if (posix.isAbsolute(target)) return true;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  return resolved === ".." || resolved.startsWith("../");
}
