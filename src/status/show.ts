import type { LedgerEvent } from "../ledger/events.js";
import type { PacketHistory, PacketRecord } from "../ledger/fold.js";
import { mutantsFlag } from "../loop/mutation-verdict.js";
import { answerId } from "../merge/message.js";
import { attemptsSentence } from "./attempts-text.js";
import { describeSpend, spendByRole } from "./spend.js";

/** What `factory show ID` reads besides the ledger: the tail of a gate's log in an attempt's run directory. */
export type GateTail = (attempt: number, gate: string) => string | undefined;

/**
 * Pure: one packet for a person, attempt by attempt: who was called and what
 * it cost, every gate with its result (and the tail of its output when it
 * failed), the review's rulings with their evidence, and what the factory
 * decided and why. Everything comes from the ledger, never from a file an
 * agent wrote, except the gate tails, which are the factory's own logs.
 */
export function showPacket(input: {
  id: string;
  goal?: string;
  sha256?: string;
  /** The attempts the packet is allowed (its own, and those unblock gave), when its file is at the target. */
  maxAttempts?: number;
  record: PacketHistory | undefined;
  state: string;
  tail: GateTail;
  tailLines?: number;
}): string[] {
  const { record } = input;
  const lines = [`${input.id}  ${input.state}${input.goal ? `  ${input.goal}` : ""}`];
  if (!record || record.events.length === 0) return [...lines, "", "It has not run yet."];
  lines.push(`attempts: ${attemptsSentence(record.attemptsUsed, input.maxAttempts ?? null, record.lastAttempt)}  cost: $${record.costUsd.toFixed(2)}`);
  const spends = spendByRole(record.events);
  if (spends.length) lines.push(`spend: ${describeSpend(spends)}`);
  if (record.reason) lines.push(`reason: ${record.reason}`);
  if (record.assessment) lines.push(`assessment: ${assessmentLine(record.assessment, input.sha256)}`);
  if (record.fingerprints.length) lines.push(`failure fingerprints: ${record.fingerprints.join(", ")}`);
  const attempts = new Map<number, LedgerEvent[]>();
  for (const event of record.events) {
    // An assessment is about no attempt: its calls are attempt 0, shown first.
    // A mutation check follows the landing: shown with the last attempt.
    const attempt = event.kind === "assessed" ? 0 : event.kind === "mutants-measured" ? record.lastAttempt : "attempt" in event && typeof event.attempt === "number" ? event.attempt : undefined;
    if (attempt === undefined) continue;
    attempts.set(attempt, [...(attempts.get(attempt) ?? []), event]);
  }
  for (const [attempt, events] of [...attempts].sort(([a], [b]) => a - b)) {
    lines.push("", attempt === 0 ? "assessment (before any attempt)" : `attempt ${attempt}`);
    for (const event of events) lines.push(...describe(event, input.tail, input.tailLines ?? 12));
  }
  const after = record.events.filter((event) => !("attempt" in event) || typeof event.attempt !== "number");
  const decisions = after.filter((event) => ["approved", "rejected", "unblocked", "reset"].includes(event.kind));
  if (decisions.length) {
    lines.push("", "by people");
    for (const event of decisions) lines.push(`  ${event.ts}  ${personLine(event)}`);
  }
  return lines;
}

function describe(event: LedgerEvent, tail: GateTail, tailLines: number): string[] {
  switch (event.kind) {
    case "claimed":
      return [`  claimed ${event.ts} by run ${event.run}`];
    case "continued":
      return [`  continued attempt ${event.fromAttempt}'s work (${event.commit.slice(0, 10)})`];
    case "planted":
      return [`  planted: ${event.files.join(", ")}`];
    case "agent-finished": {
      const cost = event.costUsd !== undefined ? `$${event.costUsd.toFixed(2)}` : event.estimatedUsd !== undefined ? `~$${event.estimatedUsd.toFixed(2)} (estimate)` : "cost unknown";
      const who = [event.tier, event.model].filter(Boolean).join(" ");
      return [`  ${event.role}${who ? ` (${who})` : ""}: ${event.outcome}, ${Math.round(event.durationMs / 1000)}s, ${cost}${event.detail ? ` — ${event.detail}` : ""}`];
    }
    case "gate-finished": {
      const line = `  gate ${event.gate}: ${event.result}${event.detail ? ` — ${event.detail}` : ""}`;
      if (event.result === "pass" || event.result === "skipped") return [line];
      const text = tail(event.attempt, event.gate);
      const shown = text ? text.trimEnd().split("\n").slice(-tailLines) : [];
      return [line, ...(event.command ? [`    $ ${event.command}`] : []), ...shown.map((row) => `    | ${row}`)];
    }
    case "review-recorded":
      return [
        `  review: ${event.verdict}${event.effective !== event.verdict ? ` (effective: ${event.effective})` : ""}; held ${event.held}, violated ${event.violated}, unverifiable ${event.unverifiable}`,
        ...event.overrides.map((override) => `    overridden: ${override}`),
        ...(event.rulings ?? []).map((ruling) => `    ${ruling.id}: ${ruling.status}${ruling.evidence ? ` at ${ruling.evidence}` : ""}`),
        ...(event.findings ?? []).map((finding) => `    finding (${finding.severity})${finding.where ? ` ${finding.where}` : ""}: ${finding.claim}`),
      ];
    case "decided":
      return [
        `  decided: ${event.decision}${event.refund ? " (not counted)" : ""}${event.reasons.length ? ` — ${event.reasons.join("; ")}` : ""}`,
        // What the next attempt was told: the failing tests, the findings.
        ...(event.feedback ?? []).flatMap((item) =>
          item
            .trimEnd()
            .split("\n")
            .slice(0, tailLines)
            .map((row, at) => `    ${at === 0 ? ">" : " "} ${row}`),
        ),
      ];
    case "mutants-measured":
      return [
        event.reason
          ? `  mutants: not measured — ${event.reason}`
          : `  mutants: ${event.killed} of ${event.made} killed by its planted and hidden tests${mutantsFlag(event) ? ` — ${mutantsFlag(event)}` : ""}`,
        ...(event.survivors ?? []).map((survivor) => `    survived: ${survivor.file}:${survivor.line} ${survivor.description}`),
      ];
    case "assessed":
      return [
        `  ruled ${event.ruling} (tier ${event.tier}) on version ${event.sha256.slice(0, 12)}`,
        ...event.findings.map((finding) => `    finding${finding.where ? ` ${finding.where}` : ""}: ${finding.claim}${finding.quote ? ` — spec: "${finding.quote}"` : ""}`),
      ];
    case "merged":
      return [`  merged: ${event.commit.slice(0, 10)}`];
    case "held":
      return [`  held for a person: ${event.commit.slice(0, 10)} (factory approve ${event.packet} / factory reject ${event.packet} --reason "…")`];
    case "asked":
      return [`  asked a person (the implementer's words): ${event.question}`, ...(event.suggestions ?? []).map((suggestion, index) => `    ${index + 1}. ${suggestion}`)];
    case "answered":
      return [`  answered by ${event.by} ${event.ts} (Factory-Answer ${answerId(event.answer)}): ${event.answer}`];
    case "blocked":
      return [`  blocked: ${event.reason}`];
    case "merge-blocked":
      return [`  waiting to land: ${event.reason}`];
    case "attempt-interrupted":
      return [`  interrupted: ${event.reason}`];
    case "outside-change-seen":
      return [`  seen meanwhile in your repository (yours, not the packet's): ${event.changes.join(", ")}`];
    default:
      return [];
  }
}

function personLine(event: LedgerEvent): string {
  switch (event.kind) {
    case "approved":
      return `approved by ${event.by}`;
    case "rejected":
      return `rejected by ${event.by}: ${event.reason}`;
    case "unblocked":
      return `unblocked by ${event.by} with ${event.extraAttempts} more attempt(s)`;
    case "reset":
      return `reset by ${event.by}`;
    default:
      return event.kind;
  }
}

/** Pure: the newest ruling for a person, e.g. `ready (tier advanced, 2026-12-02T10:00:00Z), on this version`. */
export function assessmentLine(assessment: NonNullable<PacketRecord["assessment"]>, current: string | null | undefined): string {
  const version = current === undefined || current === null ? "" : assessment.sha256 === current ? ", on this version" : ", on an older version: `factory assess` it again";
  return `${assessment.ruling} (tier ${assessment.tier}, ${assessment.at}; ${assessment.findings} finding${assessment.findings === 1 ? "" : "s"})${version}`;
}
