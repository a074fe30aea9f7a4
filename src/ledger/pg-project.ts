import type { Project } from "../git/project.js";
import type { PgLedger } from "./pg-ledger.js";
import { type BoundProject, OtherProjectError, otherProject } from "./project.js";

/**
 * Binds the database to `project` if nothing is bound yet (the first
 * migrate or worker), else checks that it is the bound one: throws
 * OtherProjectError naming both. One statement each way, so two first
 * workers at once bind once.
 */
export async function bindProject(ledger: PgLedger, project: Project, by: string): Promise<{ bound: boolean }> {
  await ledger.migrate();
  const root = [...project.roots].sort()[0];
  if (root === undefined) throw new Error(`the target branch ${project.branch} has no commit to name the project by`);
  const inserted = await ledger.query("INSERT INTO factory_project (root, branch, remote, bound_by) VALUES ($1, $2, $3, $4) ON CONFLICT (only_one) DO NOTHING", [
    root,
    project.branch,
    project.remote ?? null,
    by,
  ]);
  if ((inserted.rowCount ?? 0) > 0) return { bound: true };
  const { rows } = await ledger.query<{ root: string; branch: string; remote: string | null; bound_at: Date; bound_by: string }>(
    "SELECT root, branch, remote, bound_at, bound_by FROM factory_project",
  );
  const row = rows[0];
  if (!row) throw new Error(`${ledger.where}: the project row vanished while it was read`);
  const bound: BoundProject = { root: row.root, branch: row.branch, remote: row.remote ?? undefined, boundAt: row.bound_at.toISOString(), boundBy: row.bound_by };
  const why = otherProject(bound, project);
  if (why) throw new OtherProjectError(ledger.where, bound, why);
  return { bound: false };
}
