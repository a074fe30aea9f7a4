import { describe, expect, it } from "vitest";
import { implementerPrompt, reviewerPrompt } from "../../src/agents/prompt.js";
import type { Packet } from "../../src/packet/types.js";

const packet: Packet = {
  id: "P01",
  slug: "double",
  goal: "Add double",
  specCommit: "abc",
  specPath: "docs/SPEC.md",
  surface: "app",
  tier: "standard",
  reviewer: "advanced",
  gate: "auto",
  requires: [],
  maxAttempts: 3,
  forbiddenPaths: ["src/calc.js"],
  allowedPaths: ["src/double.js"],
  deletablePaths: [],
  retiredTests: [],
  supportFiles: [],
  brief: "Add double.",
  invariants: [{ id: "doubles", critical: true, assert: "double(n) is n * 2" }],
  file: "packets/P01.toml",
  sha256: "x",
  planted: ["test/double.test.js", "fixtures/data.json"],
};

describe("briefs that say what will be checked", () => {
  it("the implementer is told the gate commands, that the planted tests fail now and must pass unedited, the scope, and the conventions", () => {
    const prompt = implementerPrompt({
      packet,
      attempt: 1,
      planted: packet.planted,
      plantedTests: ["test/double.test.js"],
      feedback: [],
      outputPath: ".factory/result.json",
      gates: [
        { name: "lint", run: "eslint {files}", tests: false },
        { name: "test", run: "node --test --test-reporter-destination={junit} {tests}", tests: true },
      ],
      surfaceDir: ".",
      conventions: "Use tabs.",
    });
    expect(prompt).toContain("- `lint`: `eslint {files}`");
    expect(prompt).toContain("- `test`: `node --test --test-reporter-destination={junit} {tests}` — per test, against the tests' results before your work");
    expect(prompt).toContain("The planted tests `test/double.test.js` fail now, before your work; they must all pass after it");
    expect(prompt).toContain("Change only paths matching: `src/double.js`");
    expect(prompt).toContain("Never touch: `src/calc.js`");
    expect(prompt).toContain("## The project's conventions\n\nUse tabs.");
  });

  it("the reviewer sees the implementer's summary and deviations as claims, that an undeclared deviation is a major finding, and why the last attempt was sent back", () => {
    const prompt = reviewerPrompt({
      packet,
      diff: "+x",
      gates: [],
      outputPath: ".factory/review.json",
      result: { summary: "Added double with a fast path.", deviations: [{ from_packet: "return n * 2", reason: "used a shift" }] },
      lastFeedback: ["A person rejected the last attempt: name it twice()"],
    });
    expect(prompt).toContain("Added double with a fast path.");
    expect(prompt).toContain('- from "return n * 2": used a shift');
    expect(prompt).toContain("A deviation from the brief that it did not declare is at least a major finding.");
    expect(prompt).toContain("## Why the last attempt was sent back\n- A person rejected the last attempt: name it twice()");
  });
});
