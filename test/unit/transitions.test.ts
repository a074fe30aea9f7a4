import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AFTER, TRANSITIONS, transitionTableMarkdown, transitionVerdict } from "../../src/gates/transitions.js";

const BEGIN = "<!-- transitions:begin (rendered from src/gates/transitions.ts: npm run build && node scripts/render-transitions.mjs) -->";
const END = "<!-- transitions:end -->";

describe("the transition table", () => {
  it("has a verdict in every column of every row", () => {
    for (const table of Object.values(TRANSITIONS)) for (const verdicts of Object.values(table.rows)) expect(verdicts).toHaveLength(AFTER.length);
    expect(transitionVerdict("planted", "uncollectable", "failed")).toBe("FAIL"); // the reproduction: the import at the top, a wrong implementation
    expect(transitionVerdict("existing", "passed", "skipped")).toBe("FAIL");
    expect(transitionVerdict("added", "passed", "passed")).toBeUndefined();
  });

  it("is in the README as the code has it", () => {
    const readme = readFileSync(new URL("../../docs/concepts/how-tests-are-judged.md", import.meta.url), "utf8");
    const begin = readme.indexOf(BEGIN);
    const end = readme.indexOf(END);
    expect(begin, "the README's transitions block").toBeGreaterThan(0);
    expect(readme.slice(begin + BEGIN.length, end).trim()).toBe(transitionTableMarkdown());
  });
});
