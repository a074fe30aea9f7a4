export type OutputObject = { ok: true; record: Record<string, unknown>; errors: string[] } | { ok: false; errors: string[] };

/**
 * Pure: the first checks every agent output file gets (DESIGN §7, §8): it was
 * written, it is JSON, it is an object, and it names this packet.
 * `value` is undefined for a missing file and a string for a JSON parse error.
 */
export function readOutputObject(value: unknown, what: "result" | "review" | "assessment", packet: string): OutputObject {
  if (value === undefined) return { ok: false, errors: [`no ${what} file was written`] };
  if (typeof value === "string") return { ok: false, errors: [`the ${what} file is not JSON: ${value}`] };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, errors: [`the ${what} must be a JSON object`] };
  const record = value as Record<string, unknown>;
  const errors: string[] = [];
  if (record.packet !== packet) errors.push(`"packet" must be "${packet}", not ${JSON.stringify(record.packet)}`);
  return { ok: true, record, errors };
}
