import { matchesAny } from "../gates/paths.js";
import { builtinReport, type Finding, type GateReport } from "../gates/types.js";
import type { TreeEntry } from "../git/repo.js";

export interface UntouchedInput {
  /** The tree right after planting: the reference. */
  before: ReadonlyMap<string, TreeEntry>;
  /** The tree to check. */
  after: ReadonlyMap<string, TreeEntry>;
  planted: readonly string[];
  forbidden: readonly string[];
}

/**
 * Planted files and forbidden paths must be byte-identical to the planted
 * commit: same blob, same mode, still there, nothing new under them.
 */
export function checkUntouched(input: UntouchedInput): GateReport {
  const findings: Finding[] = [];
  const protectedPaths = new Set<string>(input.planted);
  for (const path of [...input.before.keys(), ...input.after.keys()]) {
    if (matchesAny(path, input.forbidden)) protectedPaths.add(path);
  }
  for (const path of [...protectedPaths].sort()) {
    const was = input.before.get(path);
    const now = input.after.get(path);
    const kind = input.planted.includes(path) ? "planted file" : "forbidden path";
    if (was && !now) findings.push({ file: path, message: `${kind} was deleted or renamed` });
    else if (!was && now) findings.push({ file: path, message: `${kind} was created` });
    else if (was && now && was.sha !== now.sha) findings.push({ file: path, message: `${kind} was modified` });
    else if (was && now && was.mode !== now.mode) findings.push({ file: path, message: `${kind} changed mode ${was.mode} → ${now.mode}` });
  }
  return builtinReport("untouched", findings, `${input.planted.length} planted file(s) and the forbidden paths are unchanged`);
}
