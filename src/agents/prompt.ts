import type { GateConfig } from "../config/types.js";
import type { GateReport } from "../gates/types.js";
import type { Packet } from "../packet/types.js";
import { bundledTemplate } from "./prompt-templates.js";
import type { ImplementerResult } from "./result.js";
import { fillTemplate } from "./template.js";

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
  /** The questions asked of a person about this version of the packet, and their answers (text, never an instruction to the factory). */
  answers?: readonly { question: string; answer: string; by: string }[];
}

/** Pure: the implementer's prompt, from its template (the bundled one, or the project's `.factory/prompts/implementer.md`). It carries everything: the agent gets this and the repository, nothing else. */
export function implementerPrompt(input: ImplementerPromptInput, template: string = bundledTemplate("implementer")): string {
  const { packet } = input;
  const rules = ["- Work only in this repository (your working directory). Do not commit; the factory commits for you."];
  if (input.planted.length) rules.push(`- These files were written in advance and must not change (not edited, moved or deleted): ${input.planted.map((p) => `\`${p}\``).join(", ")}.`);
  if (input.plantedTests?.length)
    rules.push(
      `- The planted tests ${input.plantedTests.map((p) => `\`${p}\``).join(", ")} fail now, before your work; they must all pass after it, run with the rest of the suite and on their own, without being edited.`,
    );
  if (packet.allowedPaths) rules.push(`- Change only paths matching: ${packet.allowedPaths.map((p) => `\`${p}\``).join(", ")}.`);
  if (packet.forbiddenPaths.length) rules.push(`- Never touch: ${packet.forbiddenPaths.map((p) => `\`${p}\``).join(", ")}.`);
  rules.push(
    `- Delete files only if they match: ${packet.deletablePaths.length ? packet.deletablePaths.map((p) => `\`${p}\``).join(", ") : "(nothing may be deleted)"}.`,
    "- Do not skip, weaken or delete tests, and do not edit test-runner configuration.",
    "- The factory runs the checks itself; what you say you ran is recorded and not used.",
  );
  const checks = input.gates?.length
    ? block(
        [
          `## How the work will be checked (in \`${input.surfaceDir ?? "."}\`, after your last change)`,
          "- The factory's own gates: planted files untouched, every change inside the allowed paths, no weakened tests or runner configuration, and at least one change.",
          ...input.gates.map((gate) => `- \`${gate.name}\`: \`${gate.run}\`${gate.tests ? " — per test, against the tests' results before your work: a test that passed must still pass" : ""}`),
          "({files} is the changed files, {junit} or {tap} a report path, {tests} empty or the planted tests; the planted tests also run on their own.)",
        ],
        "before",
      )
    : "";
  const answered = input.answers?.length
    ? block(
        [
          "## Your questions, answered by a person",
          "",
          ...input.answers.flatMap((entry) => [`Question: ${entry.question.replaceAll("\n", " ")}`, `Answer (${entry.by}): ${entry.answer.replaceAll("\n", "\n  ")}`, ""]),
          "The answers are the person's words about this packet. The rules above and the factory's checks still decide.",
        ],
        "before",
      )
    : "";
  const failed =
    input.feedback.length || input.continued
      ? block(
          [
            `## Attempt ${input.attempt}: what failed last time`,
            "",
            ...(input.continued ? [`The work of attempt ${input.continued} is already in your working directory (uncommitted). Fix what failed; do not start over.`, ""] : []),
            ...input.feedback.map((item) => `- ${item.replaceAll("\n", "\n  ")}`),
          ],
          "before",
        )
      : "";
  const feedback = `${answered}${failed}`;
  return fillTemplate(template, {
    id: packet.id,
    goal: packet.goal,
    brief: packet.brief,
    invariants: invariantLines(packet).join("\n"),
    rules: rules.join("\n"),
    checks,
    output: input.outputPath,
    result_contract: JSON.stringify(
      {
        packet: packet.id,
        status: "complete | blocked | failed | question",
        summary: "one paragraph",
        deviations: [{ from_packet: "what the brief said", reason: "why not" }],
        files_deleted: [],
        blocked_reason: "required when status is blocked",
        question: "only when a real ambiguity stops you: one paragraph for a person; the packet waits for the answer (no attempt spent)",
        suggested_answers: ["optional: up to four answers the person may pick from"],
        verification: { "free-form": "what you ran" },
      },
      null,
      2,
    ),
    conventions: input.conventions?.trim() ? block(["## The project's conventions", "", input.conventions.trim()], "before") : "",
    feedback,
  });
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

/** Pure: the reviewer's prompt, from its template: brief, invariants, diff and gate report, and the review contract. */
export function reviewerPrompt(input: ReviewerPromptInput, template: string = bundledTemplate("reviewer")): string {
  const { packet } = input;
  const claims = input.result
    ? block(
        [
          "## What the implementer says it did (a claim: check it against the change)",
          fenced("text", input.result.summary),
          "",
          input.result.deviations.length
            ? `Declared deviations from the brief:\n${fenced("text", input.result.deviations.map((deviation) => `- from "${deviation.from_packet}": ${deviation.reason}`).join("\n"))}`
            : "It declares no deviation from the brief.",
          "A deviation from the brief that it did not declare is at least a major finding.",
        ],
        "after",
      )
    : "";
  // The diff is the agent's text: its fence is longer than any run of backticks inside, so a ``` line cannot close it.
  const diff = input.diff.trimEnd();
  return fillTemplate(
    template.replace("```diff\n{{diff}}\n```", () => fenced("diff", "{{diff}}", diff)),
    {
      id: packet.id,
      goal: packet.goal,
      brief: packet.brief,
      invariants: invariantLines(packet).join("\n"),
      gates: input.gates.length ? input.gates.map((gate) => `- ${gate.name}: ${gate.status} — ${oneLine(gate.summary)}`).join("\n") : "- (none)",
      claims: claims + changedTestsBlock(packet.changedTests),
      last_feedback: input.lastFeedback?.length ? block(["## Why the last attempt was sent back", ...input.lastFeedback.map((item) => `- ${item.replaceAll("\n", "\n  ")}`)], "after") : "",
      conventions: input.conventions?.trim() ? block(["## The project's conventions", input.conventions.trim()], "after") : "",
      diff,
      review_contract: reviewContract(packet, input.outputPath).join("\n"),
    },
  );
}

/** Pure: the team's tests the packet changes on purpose, for the reviewer to rule on each change ("" when none). */
function changedTestsBlock(changed: readonly string[]): string {
  if (changed.length === 0) return "";
  return block(
    [
      "## Tests the packet changes on purpose (rule on each change)",
      "The packet lets the change edit these existing tests, and the factory judges the work with the edited versions:",
      ...changed.map((path) => `- ${path}`),
      "An edit to one of them that weakens what it checks, or fits it to the new code rather than to the brief, is a violation of the invariant it guards; name the file and line.",
    ],
    "after",
  );
}

/**
 * Pure: `text` in a fenced block whose fence (CommonMark) is longer than any run of backticks in `content`
 * (the text that will stand there; `text` itself by default), so nothing inside can close it and open a
 * section of its own.
 */
export function fenced(info: string, text: string, content: string = text): string {
  const longest = Math.max(0, ...[...content.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** Pure: an optional section, with the blank line that separates it from what comes before it or after it. */
function block(lines: readonly string[], blank: "before" | "after"): string {
  return blank === "before" ? `\n${lines.join("\n")}\n` : `${lines.join("\n")}\n\n`;
}

function invariantLines(packet: Packet): string[] {
  return packet.invariants.map(
    (invariant) =>
      `- \`${invariant.id}\`${invariant.critical ? " (critical)" : ""}: ${invariant.assert}${invariant.check ? ` (the factory rules on it itself by running \`${invariant.check}\`: exit 0 is held)` : ""}`,
  );
}

/** Pure: the review contract: where to write the review and its exact shape, every invariant named. */
export function reviewContract(packet: Packet, outputPath: string): string[] {
  return [
    "## Your review",
    `Write this JSON to \`${outputPath}\`. Rule on every invariant exactly once.`,
    "`held` and `violated` need evidence `path:line` pointing at an existing line of the repository.",
    "```json",
    JSON.stringify(
      {
        packet: packet.id,
        verdict: "accept | revise | reject",
        invariants: packet.invariants.map((invariant) => ({ id: invariant.id, status: "held | violated | unverifiable", evidence: "path/to/file:42" })),
        findings: [{ severity: "blocker | major | minor", file: "path", line: 1, claim: "what is wrong", fix: "what to do" }],
      },
      null,
      2,
    ),
    "```",
  ];
}

/** Pure: the one correction round's prompt, with the contract again when there is one. */
export function correctionPrompt(what: "result" | "review" | "assessment", outputPath: string, errors: readonly string[], contract: readonly string[] = []): string {
  return [
    `Your ${what} file \`${outputPath}\` was not usable:`,
    ...errors.map((error) => `- ${error}`),
    "",
    `Write the ${what} file again, complete and valid. Change nothing else.`,
    "",
    ...(contract.length ? [...contract, ""] : []),
  ].join("\n");
}
