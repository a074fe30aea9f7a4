import type { EventKind } from "./events.js";

/** What a field must hold: `cost` is a finite number not below zero, `number` any finite number; a trailing `?` makes it optional. */
type FieldType = "string" | "number" | "cost" | "boolean" | "strings" | "numbers" | "object" | "objects";
type Field = FieldType | `${FieldType}?`;

const ATTEMPT = { packet: "string", attempt: "number" } as const;
const OWNER = { run: "string", pid: "number", host: "string" } as const;

/**
 * The fields of each event kind that the fold, `status`, `show` and the
 * report read: a line whose fields do not have these types is ignored with a
 * warning, so no reader meets a string where it adds a cost or a number where
 * it joins reasons.
 */
const SHAPES: Record<EventKind, Record<string, Field>> = {
  "run-started": { ...OWNER, options: "object" },
  "run-ended": { run: "string", outcome: "string", reason: "string?" },
  "remote-unreachable": { run: "string", remote: "string", since: "string", reason: "string" },
  "remote-reachable": { run: "string", remote: "string" },
  "repairs-first": { run: "string", surface: "string", gates: "strings", repairers: "strings", waiting: "strings" },
  "run-lock-taken-over": { run: "string", previous: "object" },
  spent: { for: "string", agent: "string", model: "string", costUsd: "cost?", estimatedUsd: "cost?", run: "string?" },
  "mutants-measured": {
    packet: "string",
    commit: "string",
    made: "number",
    killed: "number",
    budget: "number",
    reason: "string?",
    survivors: "objects?",
    killedExample: "object?",
    unrun: "number?",
    timedOut: "number?",
  },
  assessed: { packet: "string", sha256: "string", ruling: "string", tier: "string", findings: "objects" },
  "ledger-restarted": { from: "string", by: "string", brokenAt: "number?" },
  "batch-gated": { packets: "strings", attempts: "numbers", tip: "string", tree: "string", verdict: "string", failed: "strings", durationMs: "number", run: "string?" },
  "packet-registered": { packet: "string", sha256: "string", file: "string" },
  claimed: { ...ATTEMPT, ...OWNER, sha256: "string", fence: "number?", worker: "string?" },
  "attempt-interrupted": { ...ATTEMPT, reason: "string", worktree: "string?" },
  "baseline-measured": { packet: "string", commit: "string", passed: "number", failed: "number", cached: "boolean" },
  planted: { ...ATTEMPT, commit: "string", files: "strings", cases: "object?" },
  "agent-started": { ...ATTEMPT, role: "string", tier: "string", call: "string", reservedUsd: "cost", run: "string" },
  "implementer-reported": { ...ATTEMPT, status: "string", verification: "boolean" },
  paused: { by: "string", interrupt: "boolean" },
  resumed: { by: "string" },
  "agent-finished": {
    ...ATTEMPT,
    call: "string?",
    role: "string",
    outcome: "string",
    durationMs: "number",
    costUsd: "cost?",
    estimatedUsd: "cost?",
    detail: "string?",
    model: "string?",
    suspectCost: "string?",
  },
  "gate-finished": { ...ATTEMPT, gate: "string", result: "string", durationMs: "number", command: "string?", exitCode: "number?", detail: "string?" },
  "review-recorded": {
    ...ATTEMPT,
    verdict: "string",
    effective: "string",
    overrides: "strings",
    held: "number",
    violated: "number",
    unverifiable: "number",
    rulings: "objects?",
    findings: "objects?",
  },
  decided: { ...ATTEMPT, decision: "string", reasons: "strings", refund: "boolean?", feedback: "strings?", fingerprint: "string?", work: "object?" },
  "outside-change-seen": { ...ATTEMPT, changes: "strings" },
  "flaky-found": { ...ATTEMPT, gate: "string", test: "string", tip: "string", tipRuns: "strings", candidateRuns: "strings" },
  "flaky-steady": { ...ATTEMPT, gate: "string", test: "string", tip: "string", tipRuns: "strings" },
  continued: { ...ATTEMPT, fromAttempt: "number", commit: "string" },
  "merge-blocked": { ...ATTEMPT, reason: "string", commit: "string", fork: "string" },
  merged: { ...ATTEMPT, commit: "string", tree: "string" },
  held: { ...ATTEMPT, tree: "string", branch: "string", commit: "string", fork: "string" },
  "pr-opened": { ...ATTEMPT, number: "number", url: "string", branch: "string", head: "string", tree: "string", fork: "string" },
  asked: { packet: "string", attempt: "number", sha256: "string", question: "string", suggestions: "strings?" },
  answered: { packet: "string", sha256: "string", attempt: "number", by: "string", answer: "string" },
  approved: { packet: "string", by: "string", tree: "string" },
  rejected: { packet: "string", by: "string", reason: "string" },
  blocked: { packet: "string", attempt: "number?", reason: "string", fix: "string?" },
  unblocked: { packet: "string", extraAttempts: "number", by: "string" },
  reset: { packet: "string", by: "string" },
  "landing-gone-acknowledged": { packet: "string", commit: "string", by: "string" },
};

/** Pure: what is wrong with an event of a known kind (the first field that does not fit), or undefined. */
export function shapeProblem(kind: EventKind, event: Record<string, unknown>): string | undefined {
  for (const [name, field] of Object.entries(SHAPES[kind])) {
    const optional = field.endsWith("?");
    const type = (optional ? field.slice(0, -1) : field) as FieldType;
    const value = event[name];
    if (value === undefined) {
      if (optional) continue;
      return `it has no "${name}"`;
    }
    if (!fits(type, value)) return `its "${name}" is not ${DESCRIBED[type]}`;
  }
  // The nested values the fold reads.
  const work = event.work as Record<string, unknown> | undefined;
  if (kind === "decided" && work && (typeof work.commit !== "string" || typeof work.from !== "string")) return `its "work" does not name a commit and the commit it was made on`;
  return undefined;
}

const DESCRIBED: Record<FieldType, string> = {
  string: "a string",
  number: "a finite number",
  cost: "a finite number of dollars not below zero",
  boolean: "true or false",
  strings: "a list of strings",
  numbers: "a list of finite numbers",
  object: "an object",
  objects: "a list of objects",
};

function fits(type: FieldType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "cost":
      return typeof value === "number" && Number.isFinite(value) && value >= 0;
    case "boolean":
      return typeof value === "boolean";
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "numbers":
      return Array.isArray(value) && value.every((item) => typeof item === "number" && Number.isFinite(item));
    case "object":
      return isObject(value);
    case "objects":
      return Array.isArray(value) && value.every(isObject);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
