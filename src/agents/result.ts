import { readOutputObject } from "./output-file.js";

/** The implementer's result file (DESIGN §7). Extra keys are ignored; `verification` is recorded, never used. */
export interface ImplementerResult {
  status: "complete" | "blocked" | "failed";
  summary: string;
  deviations: { from_packet: string; reason: string }[];
  filesDeleted: string[];
  blockedReason: string | undefined;
  verification: unknown;
}

export type ResultCheck = { ok: true; result: ImplementerResult } | { ok: false; errors: string[] };

/** Pure: validates the parsed JSON of a result file (undefined: the file is missing; a string: it is not JSON). */
export function validateResult(value: unknown, packet: string): ResultCheck {
  const opened = readOutputObject(value, "result", packet);
  if (!opened.ok) return opened;
  const { record, errors } = opened;
  const status = record.status;
  if (status !== "complete" && status !== "blocked" && status !== "failed") {
    errors.push(`"status" must be "complete", "blocked" or "failed", not ${JSON.stringify(status)}`);
  }
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
  if (errors.length > 0 || (status !== "complete" && status !== "blocked" && status !== "failed")) return { ok: false, errors };
  return {
    ok: true,
    result: {
      status,
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
