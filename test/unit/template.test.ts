import { describe, expect, it } from "vitest";
import { bundledTemplate } from "../../src/agents/prompt-templates.js";
import { fillTemplate, IMPLEMENTER_TEMPLATE, REVIEWER_TEMPLATE, templateProblems } from "../../src/agents/template.js";

describe("prompt templates", () => {
  it("are filled in one pass: a value that holds {{…}} is left as written", () => {
    expect(fillTemplate("# {{id}}\n\n{{brief}}\n\n\n", { id: "P01", brief: "keep {{id}} literal" })).toBe("# P01\n\nkeep {{id}} literal\n");
  });

  it("name unknown placeholders and the ones the agent cannot do without; the bundled ones have none of either", () => {
    expect(templateProblems("{{brief}} {{nope}}", IMPLEMENTER_TEMPLATE)).toEqual([
      expect.stringContaining("{{nope}} is not a placeholder the factory fills"),
      "{{invariants}} is missing; the agent needs it",
      "{{rules}} is missing; the agent needs it",
      "{{output}} is missing; the agent needs it",
      "{{result_contract}} is missing; the agent needs it",
      "{{feedback}} is missing; the agent needs it",
    ]);
    expect(templateProblems(bundledTemplate("implementer"), IMPLEMENTER_TEMPLATE)).toEqual([]);
    expect(templateProblems(bundledTemplate("reviewer"), REVIEWER_TEMPLATE)).toEqual([]);
  });
});
