import { readOutputObject } from "../agents/output-file.js";
import type { Invariant } from "../packet/types.js";

export type InvariantStatus = "held" | "violated" | "unverifiable";
export type ReviewVerdict = "accept" | "revise" | "reject";
export type Severity = "blocker" | "major" | "minor";

export interface InvariantRuling {
  id: string;
  status: InvariantStatus;
  evidence: string | undefined;
}

export interface ReviewFinding {
  severity: Severity;
  file: string | undefined;
  line: number | undefined;
  claim: string;
  fix: string | undefined;
}

export interface Review {
  verdict: ReviewVerdict;
  invariants: InvariantRuling[];
  findings: ReviewFinding[];
}

export type ReviewCheck = { ok: true; review: Review } | { ok: false; errors: string[] };

const EVIDENCE = /^([^:\s][^:]*):(\d+)(?:-\d+)?$/;

/** Pure: how many lines a file's text has (a last line without its newline counts). */
export function lineCount(text: string): number {
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

/** Splits `path:line` evidence; undefined when it is not of that form. */
export function parseEvidence(evidence: string): { path: string; line: number } | undefined {
  const match = EVIDENCE.exec(evidence.trim());
  if (!match) return undefined;
  return { path: (match[1] ?? "").replace(/^\.\//, ""), line: Number(match[2]) };
}

/**
 * Pure: the review file's structure (DESIGN §8): every declared invariant
 * exactly once, no unknown ids, `held`/`violated` with `path:line` evidence.
 * Whether the evidence resolves is checked against the worktree separately.
 */
export function validateReview(value: unknown, packet: string, invariants: readonly Invariant[]): ReviewCheck {
  const opened = readOutputObject(value, "review", packet);
  if (!opened.ok) return opened;
  const { record, errors } = opened;
  const verdict = record.verdict;
  if (verdict !== "accept" && verdict !== "revise" && verdict !== "reject") errors.push(`"verdict" must be "accept", "revise" or "reject", not ${JSON.stringify(verdict)}`);

  const rulings: InvariantRuling[] = [];
  const declared = new Set(invariants.map((invariant) => invariant.id));
  const seen = new Set<string>();
  const list = record.invariants;
  if (!Array.isArray(list)) {
    errors.push(`"invariants" must be a list with one ruling per declared invariant`);
  } else {
    list.forEach((item, index) => {
      const ruling = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
      const id = ruling.id;
      const status = ruling.status;
      const evidence = typeof ruling.evidence === "string" ? ruling.evidence : undefined;
      if (typeof id !== "string") {
        errors.push(`invariants[${index}]: "id" is missing`);
        return;
      }
      if (!declared.has(id)) {
        errors.push(`invariants[${index}]: unknown invariant "${id}"`);
        return;
      }
      if (seen.has(id)) {
        errors.push(`invariants[${index}]: "${id}" is ruled on twice`);
        return;
      }
      seen.add(id);
      if (status !== "held" && status !== "violated" && status !== "unverifiable") {
        errors.push(`invariant "${id}": "status" must be "held", "violated" or "unverifiable", not ${JSON.stringify(status)}`);
        return;
      }
      if (status !== "unverifiable" && (evidence === undefined || !parseEvidence(evidence))) {
        errors.push(`invariant "${id}": "${status}" needs evidence of the form path:line, not ${JSON.stringify(ruling.evidence)}`);
        return;
      }
      rulings.push({ id, status, evidence });
    });
    for (const invariant of invariants) {
      if (!seen.has(invariant.id)) errors.push(`invariant "${invariant.id}" has no ruling`);
    }
  }

  const findings: ReviewFinding[] = [];
  const rawFindings = record.findings ?? [];
  if (!Array.isArray(rawFindings)) {
    errors.push(`"findings" must be a list`);
  } else {
    rawFindings.forEach((item, index) => {
      const finding = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
      const severity = finding.severity;
      if (severity !== "blocker" && severity !== "major" && severity !== "minor") {
        errors.push(`findings[${index}]: "severity" must be "blocker", "major" or "minor"`);
        return;
      }
      if (typeof finding.claim !== "string" || finding.claim.trim() === "") {
        errors.push(`findings[${index}]: "claim" is required`);
        return;
      }
      findings.push({
        severity,
        file: typeof finding.file === "string" ? finding.file : undefined,
        line: typeof finding.line === "number" ? finding.line : undefined,
        claim: finding.claim,
        fix: typeof finding.fix === "string" ? finding.fix : undefined,
      });
    });
  }
  if (errors.length > 0 || (verdict !== "accept" && verdict !== "revise" && verdict !== "reject")) return { ok: false, errors };
  return { ok: true, review: { verdict, invariants: rulings, findings } };
}
