/** A prompt template: prose with `{{name}}` placeholders the factory fills (DESIGN §7). */
export interface TemplateSpec {
  /** Every placeholder the factory fills. */
  names: readonly string[];
  /** Placeholders a template may not leave out: without them the agent cannot do its part of the contract. */
  required: readonly string[];
}

export const IMPLEMENTER_TEMPLATE: TemplateSpec = {
  names: ["id", "goal", "brief", "invariants", "rules", "checks", "output", "result_contract", "conventions", "feedback"],
  required: ["brief", "invariants", "rules", "output", "result_contract", "feedback"],
};

export const REVIEWER_TEMPLATE: TemplateSpec = {
  names: ["id", "goal", "brief", "invariants", "gates", "claims", "last_feedback", "conventions", "diff", "review_contract"],
  required: ["brief", "invariants", "gates", "claims", "diff", "review_contract"],
};

export const ASSESSOR_TEMPLATE: TemplateSpec = {
  names: ["id", "goal", "packet_file", "packet", "planted", "spec_path", "spec_commit", "spec", "conventions", "assessment_contract"],
  required: ["packet", "spec", "assessment_contract"],
};

export const CUT_TEMPLATE: TemplateSpec = {
  names: ["scope", "spec_path", "spec_commit", "spec", "output_dir", "packet_format", "existing", "conventions"],
  required: ["scope", "spec", "output_dir", "packet_format"],
};

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

/** Pure: what is wrong with a template (unknown or missing placeholders), or nothing. */
export function templateProblems(template: string, spec: TemplateSpec): string[] {
  const used = new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ""));
  const unknown = [...used].filter((name) => !spec.names.includes(name));
  const missing = spec.required.filter((name) => !used.has(name));
  return [
    ...unknown.map((name) => `{{${name}}} is not a placeholder the factory fills (it fills ${spec.names.map((known) => `{{${known}}}`).join(", ")})`),
    ...missing.map((name) => `{{${name}}} is missing; the agent needs it`),
  ];
}

/**
 * Pure: the template with its placeholders filled, in one pass (a value that
 * contains `{{…}}`, such as a brief, is never filled again), ending in
 * exactly one newline.
 */
export function fillTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return `${template.replace(PLACEHOLDER, (match, name: string) => values[name] ?? match).trimEnd()}\n`;
}
