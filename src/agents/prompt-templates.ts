import { readFileSync } from "node:fs";
import { readFileAt } from "../git/repo.js";
import { ASSESSOR_TEMPLATE, CUT_TEMPLATE, IMPLEMENTER_TEMPLATE, REVIEWER_TEMPLATE, type TemplateSpec, templateProblems } from "./template.js";

/** A prompt template's name: the role it is for, or `cut` (the planner's). */
export type PromptRole = "implementer" | "reviewer" | "assessor" | "cut";

/** Where a project overrides a prompt: `.factory/prompts/<role>.md` at the tip of the target branch. */
export const PROJECT_PROMPTS_DIR = ".factory/prompts";

export const TEMPLATE_SPECS: Record<PromptRole, TemplateSpec> = { implementer: IMPLEMENTER_TEMPLATE, reviewer: REVIEWER_TEMPLATE, assessor: ASSESSOR_TEMPLATE, cut: CUT_TEMPLATE };

const bundled = new Map<PromptRole, string>();

/** The factory's own template for a role (`src/agents/prompts/<role>.md`, shipped with the package), read once. */
export function bundledTemplate(role: PromptRole): string {
  let text = bundled.get(role);
  if (text === undefined) {
    // From dist/agents/ and from src/agents/ alike, the package root is two levels up.
    text = readFileSync(new URL(`../../src/agents/prompts/${role}.md`, import.meta.url), "utf8");
    bundled.set(role, text);
  }
  return text;
}

export type ProjectTemplate = { ok: true; template: string | undefined } | { ok: false; problem: string };

/** The project's override of a role's template at `ref`, checked: undefined when there is none. */
export async function projectTemplate(root: string, ref: string, role: PromptRole): Promise<ProjectTemplate> {
  const path = `${PROJECT_PROMPTS_DIR}/${role}.md`;
  const text = await readFileAt(root, ref, path);
  if (text === undefined) return { ok: true, template: undefined };
  const problems = templateProblems(text, TEMPLATE_SPECS[role]);
  if (problems.length) return { ok: false, problem: `${path}: ${problems.join("; ")}` };
  return { ok: true, template: text };
}
