import { describe, expect, it } from "vitest";
import { mergeMessage } from "../../src/merge/message.js";
import type { Packet } from "../../src/packet/types.js";

const packet = (goal: string): Packet => ({
  id: "P01",
  slug: "parser",
  goal,
  specCommit: "504abb9c",
  specPath: "SPEC.md",
  surface: undefined,
  tier: "standard",
  reviewer: "advanced",
  gate: "auto",
  requires: [],
  repairs: [],
  maxAttempts: 3,
  forbiddenPaths: [],
  allowedPaths: undefined,
  deletablePaths: [],
  retiredTests: [],
  changedTests: [],
  supportFiles: [],
  brief: "b",
  invariants: [{ id: "i", critical: true, assert: "a" }],
  file: "packets/P01-parser.toml",
  sha256: "f".repeat(64),
  planted: [],
});
const provenance = { attempt: 1, gates: [], counts: undefined };
const subject = (template: string, goal: string): string => mergeMessage(template, packet(goal), provenance).split("\n")[0] ?? "";

describe("the squash commit's subject", () => {
  it("does not double a conventional-commit type when the goal has its own", () => {
    expect(subject("feat: {goal} [{id}]", "fix(parser): accept trailing commas")).toBe("fix(parser): accept trailing commas [P01]");
    expect(subject("feat(core)!: {goal}", "docs: say why")).toBe("docs: say why");
  });

  it("keeps the template's type for a plain goal, and any template that does not put a type before the goal", () => {
    expect(subject("feat: {goal} [{id}]", "Accept trailing commas")).toBe("feat: Accept trailing commas [P01]");
    expect(subject("[{id}] {goal}", "fix: x")).toBe("[P01] fix: x");
  });
});
