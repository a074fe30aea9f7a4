import type { GateConfig } from "../config/types.js";
import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";
import type { ImplementerResult } from "./result.js";

export interface ImplementerPromptInput {
  packet: Packet;
  attempt: number;
  planted: readonly string[];
  /** Which of the planted files are tests (they fail now and must pass). */
  plantedTests?: readonly string[];
  /** The commands that will judge the work (the surface's gates), and where they run. */
  gates?: readonly Pick<GateConfig, "name" | "run" | "tests">[];
  surfaceDir?: string;
  /** The project's conventions (`.factory/conventions.md` at the tip), for every prompt. */
  conventions?: string;
  /** What failed last time: gate output tails, contract errors, reviewer findings. */
  feedback: readonly string[];
  outputPath: string;
  /** The attempt whose work is already in the worktree, to continue. */
  continued?: number;
}

/** Pure: the implementer's prompt. It carries everything: the agent gets this and the repository, nothing else. */
export function implementerPrompt(input: ImplementerPromptInput): string {
  const { packet } = input;
  const lines = [
    `# Task ${packet.id}: ${packet.goal}`,
    "",
    packet.brief,
    "",
    "## Invariants a reviewer will check, one by one",
    ...packet.invariants.map((invariant) => `- \`${invariant.id}\`${invariant.critical ? " (critical)" : ""}: ${invariant.assert}`),
    "",
    "## Rules",
    "- Work only in this repository (your working directory). Do not commit; the factory commits for you.",
  ];
  if (input.planted.length) lines.push(`- These files were written in advance and must not change (not edited, moved or deleted): ${input.planted.map((p) => `\`${p}\``).join(", ")}.`);
  if (input.plantedTests?.length) lines.push(`- The planted tests ${input.plantedTests.map((p) => `\`${p}\``).join(", ")} fail now, before your work; they must all pass after it, run with the rest of the suite and on their own, without being edited.`);
  if (packet.allowedPaths) lines.push(`- Change only paths matching: ${packet.allowedPaths.map((p) => `\`${p}\``).join(", ")}.`);
  if (packet.forbiddenPaths.length) lines.push(`- Never touch: ${packet.forbiddenPaths.map((p) => `\`${p}\``).join(", ")}.`);
  lines.push(
    `- Delete files only if they match: ${packet.deletablePaths.length ? packet.deletablePaths.map((p) => `\`${p}\``).join(", ") : "(nothing may be deleted)"}.`,
    "- Do not skip, weaken or delete tests, and do not edit test-runner configuration.",
    "- The factory runs the checks itself; what you say you ran is recorded and not used.",
  );
  if (input.gates?.length) {
    lines.push(
      "",
      `## How the work will be checked (in \`${input.surfaceDir ?? "."}\`, after your last change)`,
      "- The factory's own gates: planted files untouched, every change inside the allowed paths, no weakened tests or runner configuration, and at least one change.",
      ...input.gates.map((gate) => `- \`${gate.name}\`: \`${gate.run}\`${gate.tests ? " — per test, against the tests' results before your work: a test that passed must still pass" : ""}`),
      "({files} is the changed files, {junit} a report path, {tests} empty or the planted tests; the planted tests also run on their own.)",
    );
  }
  lines.push(
    "",
    "## When you are done",
    `Write this JSON to \`${input.outputPath}\`:`,
    "```json",
    JSON.stringify({
      packet: packet.id, status: "complete | blocked | failed", summary: "one paragraph",
      deviations: [{ from_packet: "what the brief said", reason: "why not" }], files_deleted: [],
      blocked_reason: "required when status is blocked", verification: { "free-form": "what you ran" },
    }, null, 2),
    "```",
  );
  if (input.conventions?.trim()) lines.push("", "## The project's conventions", "", input.conventions.trim());
  if (input.feedback.length || input.continued) {
    lines.push("", `## Attempt ${input.attempt}: what failed last time`, "");
    if (input.continued) lines.push(`The work of attempt ${input.continued} is already in your working directory (uncommitted). Fix what failed; do not start over.`, "");
    lines.push(...input.feedback.map((item) => `- ${item.replaceAll("\n", "\n  ")}`));
  }
  return `${lines.join("\n")}\n`;
}

export interface ReviewerPromptInput {
  packet: Packet;
  diff: string;
  gates: readonly GateReport[];
  outputPath: string;
  /** The implementer's own account: its summary and declared deviations. */
  result?: Pick<ImplementerResult, "summary" | "deviations">;
  /** Why the last attempt was sent back, when this is a retry. */
  lastFeedback?: readonly string[];
  conventions?: string;
}

/** Pure: the reviewer's prompt: brief, invariants, diff and gate report, and the review contract. */
export function reviewerPrompt(input: ReviewerPromptInput): string {
  const { packet } = input;
  return [
    `# Review of task ${packet.id}: ${packet.goal}`,
    "",
    "You are the reviewer. Do not change any file in this repository: any change discards your review.",
    "",
    "## The brief the implementer was given",
    packet.brief,
    "",
    "## Invariants: rule on every one",
    ...packet.invariants.map((invariant) => `- \`${invariant.id}\`${invariant.critical ? " (critical)" : ""}: ${invariant.assert}`),
    "",
    "## Gates the factory ran",
    ...input.gates.map((gate) => `- ${gate.name}: ${gate.status} — ${gate.summary}`),
    "",
    ...(input.result ? [
      "## What the implementer says it did (a claim: check it against the change)",
      input.result.summary,
      "",
      input.result.deviations.length
        ? `Declared deviations from the brief:\n${input.result.deviations.map((deviation) => `- from "${deviation.from_packet}": ${deviation.reason}`).join("\n")}`
        : "It declares no deviation from the brief.",
      "A deviation from the brief that it did not declare is at least a major finding.",
      "",
    ] : []),
    ...(input.lastFeedback?.length ? ["## Why the last attempt was sent back", ...input.lastFeedback.map((item) => `- ${item.replaceAll("\n", "\n  ")}`), ""] : []),
    ...(input.conventions?.trim() ? ["## The project's conventions", input.conventions.trim(), ""] : []),
    "## The change",
    "```diff",
    input.diff.trimEnd(),
    "```",
    "",
    ...reviewContract(packet, input.outputPath),
    "",
  ].join("\n");
}

/** Pure: the review contract: where to write the review and its exact shape, every invariant named. */
export function reviewContract(packet: Packet, outputPath: string): string[] {
  return [
    "## Your review",
    `Write this JSON to \`${outputPath}\`. Rule on every invariant exactly once.`,
    "`held` and `violated` need evidence `path:line` pointing at an existing line of the repository.",
    "```json",
    JSON.stringify({
      packet: packet.id, verdict: "accept | revise | reject",
      invariants: packet.invariants.map((invariant) => ({ id: invariant.id, status: "held | violated | unverifiable", evidence: "path/to/file:42" })),
      findings: [{ severity: "blocker | major | minor", file: "path", line: 1, claim: "what is wrong", fix: "what to do" }],
    }, null, 2),
    "```",
  ];
}

/** Pure: the one correction round's prompt, with the contract again when there is one. */
export function correctionPrompt(what: "result" | "review", outputPath: string, errors: readonly string[], contract: readonly string[] = []): string {
  return [
    `Your ${what} file \`${outputPath}\` was not usable:`,
    ...errors.map((error) => `- ${error}`),
    "",
    `Write the ${what} file again, complete and valid. Change nothing else.`,
    "",
    ...(contract.length ? [...contract, ""] : []),
  ].join("\n");
}
