import { readOutputObject } from "./output-file.js";

/** The implementer's result file (DESIGN §7). Extra keys are ignored; `verification` is recorded, never used. */
export interface ImplementerResult {
  status: "complete" | "blocked" | "failed" | "question";
  summary: string;
  deviations: { from_packet: string; reason: string }[];
  filesDeleted: string[];
  blockedReason: string | undefined;
  /** With status "question": one paragraph for a person, and up to four suggested answers. */
  question?: { text: string; suggestions: string[] };
  verification: unknown;
}

/** A question is one paragraph: longer text is refused as a contract error, not cut. */
export const MAX_QUESTION_CHARS = 2000;
const MAX_SUGGESTIONS = 4;
const STATUSES = ["complete", "blocked", "failed", "question"] as const;

export type ResultCheck = { ok: true; result: ImplementerResult } | { ok: false; errors: string[] };

/** Pure: validates the parsed JSON of a result file (undefined: the file is missing; a string: it is not JSON). */
export function validateResult(value: unknown, packet: string): ResultCheck {
  const opened = readOutputObject(value, "result", packet);
  if (!opened.ok) return opened;
  const { record, errors } = opened;
  const status = record.status;
  const known = STATUSES.find((candidate) => candidate === status);
  if (!known) errors.push(`"status" must be "complete", "blocked", "failed" or "question", not ${JSON.stringify(status)}`);
  if (typeof record.summary !== "string" || record.summary.trim() === "") errors.push(`"summary" must be a non-empty string`);
  const deviations = record.deviations ?? [];
  if (
    !Array.isArray(deviations) ||
    !deviations.every((d) => typeof d === "object" && d !== null && typeof (d as Record<string, unknown>).from_packet === "string" && typeof (d as Record<string, unknown>).reason === "string")
  ) {
    errors.push(`"deviations" must be a list of { "from_packet": string, "reason": string }`);
  }
  const deleted = record.files_deleted ?? [];
  if (!Array.isArray(deleted) || !deleted.every((path) => typeof path === "string")) errors.push(`"files_deleted" must be a list of paths`);
  const blockedReason = record.blocked_reason;
  if (status === "blocked" && (typeof blockedReason !== "string" || blockedReason.trim() === "")) {
    errors.push(`"blocked_reason" is required when status is "blocked"`);
  }
  const question = record.question;
  const suggestions = record.suggested_answers ?? [];
  if (known === "question") {
    if (typeof question !== "string" || question.trim() === "") errors.push(`"question" is required when status is "question": one paragraph for a person`);
    else if (question.length > MAX_QUESTION_CHARS) errors.push(`"question" is ${question.length} characters; ask one question in one paragraph (at most ${MAX_QUESTION_CHARS})`);
    if (!Array.isArray(suggestions) || suggestions.length > MAX_SUGGESTIONS || !suggestions.every((entry) => typeof entry === "string" && entry.trim() !== "" && entry.length <= 500)) {
      errors.push(`"suggested_answers" must be a list of at most ${MAX_SUGGESTIONS} short answers`);
    }
  }
  if (errors.length > 0 || !known) return { ok: false, errors };
  return {
    ok: true,
    result: {
      status: known,
      ...(known === "question" ? { question: { text: String(question).trim(), suggestions: (suggestions as string[]).map((entry) => entry.trim()) } } : {}),
      summary: String(record.summary),
      deviations: deviations as ImplementerResult["deviations"],
      filesDeleted: deleted as string[],
      blockedReason: typeof blockedReason === "string" ? blockedReason : undefined,
      verification: record.verification,
    },
  };
}

/** Reads an agent's JSON output file: undefined when missing, a string describing a parse error otherwise. */
export function parseJsonFile(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
