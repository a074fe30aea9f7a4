import type { Change } from "../git/diff.js";
import { matchesAny } from "./paths.js";
import { builtinReport, type Finding, type GateReport } from "./types.js";

export interface ScopeInput {
  changes: readonly Change[];
  /** Undefined: no positive scope declared. */
  allowed: readonly string[] | undefined;
  deletable: readonly string[];
  /** Planted files are the untouched gate's business, not scope's. */
  planted: readonly string[];
}

/** Every changed path inside allowed_paths when declared; deletions only of deletable_paths. */
export function checkScope(input: ScopeInput): GateReport {
  const findings: Finding[] = [];
  for (const change of input.changes) {
    if (input.planted.includes(change.path)) continue;
    if (change.kind === "deleted") {
      if (!matchesAny(change.path, input.deletable)) {
        findings.push({ file: change.path, message: "deleted, but it is not in deletable_paths" });
      }
      continue;
    }
    if (input.allowed !== undefined && !matchesAny(change.path, input.allowed)) {
      findings.push({ file: change.path, message: `${change.kind} outside allowed_paths` });
    }
  }
  return builtinReport("scope", findings, `${input.changes.length} changed path(s), all in scope`);
}
