import { readOutputObject } from "../agents/output-file.js";
import { fenced } from "../agents/prompt.js";
import { bundledTemplate } from "../agents/prompt-templates.js";
import { fillTemplate } from "../agents/template.js";
import { parseEvidence } from "../review/contract.js";

export const ASSESSMENT_OUTPUT = ".factory/assessment.json";

export const RULINGS = ["ready", "recut", "reject"] as const;
export type Ruling = (typeof RULINGS)[number];

/** One finding of an assessor: a claim, backed by a passage of the spec (`quote`) and/or a line of the tree (`where`). */
export interface AssessmentFinding {
  claim: string;
  quote?: string;
  where?: string;
  fix?: string;
}

export interface Assessment {
  ruling: Ruling;
  findings: AssessmentFinding[];
}

export type AssessmentCheck = { ok: true; assessment: Assessment } | { ok: false; errors: string[] };

/**
 * Pure: the assessment file's structure: a ruling, and findings each with a
 * claim; a `recut` or `reject` names at least one finding, and every finding
 * of one cites its evidence (a quote of the spec or a `path:line`). Whether
 * the evidence is true is checked separately (`evidenceProblems`).
 */
export function validateAssessment(value: unknown, packet: string): AssessmentCheck {
  const opened = readOutputObject(value, "assessment", packet);
  if (!opened.ok) return opened;
  const { record, errors } = opened;
  const ruling = RULINGS.find((candidate) => candidate === record.ruling);
  if (!ruling) errors.push(`"ruling" must be "ready", "recut" or "reject", not ${JSON.stringify(record.ruling)}`);
  const findings: AssessmentFinding[] = [];
  const raw = record.findings ?? [];
  if (!Array.isArray(raw)) {
    errors.push(`"findings" must be a list`);
  } else {
    raw.forEach((item, index) => {
      const finding = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
      const claim = finding.claim;
      if (typeof claim !== "string" || claim.trim() === "") {
        errors.push(`findings[${index}]: "claim" is required`);
        return;
      }
      const quote = optionalText(finding.quote);
      const where = optionalText(finding.where);
      const fix = optionalText(finding.fix);
      if (finding.quote !== undefined && quote === undefined) errors.push(`findings[${index}]: "quote" must be a non-empty string`);
      if (finding.where !== undefined && (where === undefined || !parseEvidence(where))) errors.push(`findings[${index}]: "where" must be of the form path:line, not ${JSON.stringify(finding.where)}`);
      if (ruling && ruling !== "ready" && quote === undefined && where === undefined)
        errors.push(`findings[${index}]: a ${ruling} finding needs its evidence: a "quote" of the spec or a "where" (path:line)`);
      findings.push({ claim, ...(quote ? { quote } : {}), ...(where ? { where } : {}), ...(fix ? { fix } : {}) });
    });
  }
  if (ruling && ruling !== "ready" && Array.isArray(raw) && raw.length === 0) errors.push(`a "${ruling}" ruling needs at least one finding saying why`);
  if (errors.length > 0 || !ruling) return { ok: false, errors };
  return { ok: true, assessment: { ruling, findings } };
}

function optionalText(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** What evidence is checked against: the spec at the packet's spec_commit, and the line count of a file at the tip (with the planted files). */
export interface EvidenceSources {
  spec: string;
  /** Undefined when the file does not exist there. */
  lines(path: string): number | undefined;
}

/**
 * Pure: each finding's evidence that is not true, as a sentence: a quote
 * that does not occur in the spec (whitespace and line breaks aside), a
 * `path:line` that names no file or no line. Evidence the factory cannot
 * confirm is never recorded as a ruling's reason.
 */
export function evidenceProblems(assessment: Assessment, sources: EvidenceSources): string[] {
  const spec = squeeze(sources.spec);
  const problems: string[] = [];
  assessment.findings.forEach((finding, index) => {
    if (finding.quote !== undefined && !spec.includes(squeeze(finding.quote))) {
      problems.push(`findings[${index}]: the quote ${JSON.stringify(clip(finding.quote))} does not occur in the spec; quote it exactly`);
    }
    const where = finding.where ? parseEvidence(finding.where) : undefined;
    if (where) {
      const lines = sources.lines(where.path);
      if (lines === undefined) problems.push(`findings[${index}]: ${finding.where} names a file that does not exist at the tip`);
      else if (where.line < 1 || where.line > lines) problems.push(`findings[${index}]: ${finding.where} cites a line that does not exist (${where.path} has ${lines} lines)`);
    }
  });
  return problems;
}

/** Whitespace runs as one space, trimmed: a quote wrapped or re-indented is still the spec's text. */
function squeeze(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 80)}…`;
}

/** Pure: the assessment contract: where to write the ruling and its exact shape. */
export function assessmentContract(packet: string, outputPath: string): string[] {
  return [
    "## Your ruling",
    `Write this JSON to \`${outputPath}\`. A \`recut\` or \`reject\` needs at least one finding.`,
    'Each finding cites its evidence: a "quote" copied exactly from the spec above, and/or a "where" `path:line` of an existing line in this checkout.',
    "The factory checks every quote and every line; evidence that does not resolve makes the ruling unusable.",
    "```json",
    JSON.stringify(
      { packet, ruling: "ready | recut | reject", findings: [{ claim: "what is wrong with the packet", quote: "exact text of the spec", where: "path/to/file:42", fix: "what to change" }] },
      null,
      2,
    ),
    "```",
  ];
}

export interface AssessorPromptInput {
  id: string;
  goal: string;
  /** The packet file as committed, and where. */
  packetFile: string;
  packetText: string;
  planted: readonly string[];
  specPath: string;
  specCommit: string;
  spec: string;
  conventions?: string;
  outputPath: string;
}

/** Pure: the assessor's prompt, from its template (the bundled one, or the project's `.factory/prompts/assessor.md`). */
export function assessorPrompt(input: AssessorPromptInput, template: string = bundledTemplate("assessor")): string {
  return fillTemplate(template, {
    id: input.id,
    goal: input.goal,
    packet_file: input.packetFile,
    packet: fenced("toml", input.packetText.trimEnd()),
    planted: input.planted.length ? input.planted.map((path) => `- \`${path}\``).join("\n") : "- (none)",
    spec_path: input.specPath,
    spec_commit: input.specCommit,
    spec: fenced("markdown", input.spec.trimEnd()),
    conventions: input.conventions?.trim() ? `## The project's conventions\n\n${input.conventions.trim()}\n\n` : "",
    assessment_contract: assessmentContract(input.id, input.outputPath).join("\n"),
  });
}
