import type { Project } from "../git/project.js";

/** What a database records of its project. */
export interface BoundProject {
  root: string;
  branch: string;
  remote: string | undefined;
  boundAt: string;
  boundBy: string;
}

/**
 * Pure: why `mine` is not the project the database was bound to, or
 * undefined when it is. The bound root must still be a root of this history
 * (merging another history in adds roots, never removes one).
 */
export function otherProject(bound: BoundProject, mine: Project): string | undefined {
  const differences: string[] = [];
  if (!mine.roots.includes(bound.root))
    differences.push(`its history starts at ${bound.root.slice(0, 12)}, this repository's at ${mine.roots.map((root) => root.slice(0, 12)).join(", ") || "nothing"}`);
  if (bound.branch !== mine.branch) differences.push(`it lands on ${bound.branch}, this repository's config on ${mine.branch}`);
  if ((bound.remote ?? "") !== (mine.remote ?? "")) differences.push(`its remote is ${bound.remote ?? "none"}, this repository's ${mine.remote ?? "none"}`);
  return differences.length > 0 ? differences.join("; ") : undefined;
}

export class OtherProjectError extends Error {
  constructor(
    readonly where: string,
    readonly bound: BoundProject,
    readonly why: string,
  ) {
    super(
      `${where} serves another project (bound by ${bound.boundBy} at ${bound.boundAt}: root ${bound.root.slice(0, 12)}, branch ${bound.branch}, remote ${bound.remote ?? "none"}): ${why}. One database serves one project: give this one its own database ([ledger] url or FACTORY_LEDGER_URL)`,
    );
  }
}
