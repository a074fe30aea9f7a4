import { createHash } from "node:crypto";
import type { AttemptEnd } from "./attempt-end.js";

/**
 * Pure: a short, stable name for how an attempt failed, from its normalized
 * findings (gate names, failing test ids, override reasons, contract errors),
 * with what differs between two runs of the same failure taken out: commit
 * shas, durations, absolute paths. Undefined for an end that is not the
 * work's failure.
 */
export function fingerprintOf(end: AttemptEnd): string | undefined {
  const findings = findingsOf(end);
  if (findings === undefined) return undefined;
  const text = JSON.stringify([end.kind, ...findings.map(normalize)]);
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

function findingsOf(end: AttemptEnd): string[] | undefined {
  switch (end.kind) {
    case "gates-red":
      return end.reports
        .filter((report) => report.status === "fail")
        .flatMap((report) => [
          `gate ${report.name}`,
          ...(report.findings.length ? report.findings.map((finding) => `${finding.file}${finding.line ? `:${finding.line}` : ""} ${finding.message}`).sort() : [report.summary]),
        ]);
    case "reviewed":
      return end.verdict.verdict === "revise" ? [...end.verdict.overrides, ...end.feedback] : undefined;
    case "result-contract":
      return [...end.errors].sort();
    case "agent-failed":
    case "implementer-failed":
    case "reviewer-tampered":
    case "merge-conflict":
      return [end.reason];
    case "spec-drift":
    case "defective-packet":
    case "reached-outside":
    case "environment-error":
    case "rate-limited":
    case "implementer-blocked":
    case "reviewer-unusable":
      return undefined;
  }
}

function normalize(text: string): string {
  return text
    .replace(/\b[0-9a-f]{7,40}\b/g, "<sha>")
    .replace(/\d+(\.\d+)?\s?(ms|s|m|h)\b/g, "<duration>")
    .replace(/(?:\/[\w.@+-]+){2,}/g, (path) => path.split("/").slice(-2).join("/"));
}
