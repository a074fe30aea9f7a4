import { describe, expect, it } from "vitest";
import type { Packet } from "../../src/packet/types.js";
import { assessorPrompt, evidenceProblems, validateAssessment } from "../../src/planning/assessment.js";
import { assessmentRefusals, needsAssessment } from "../../src/planning/policy.js";

const SPEC = "# Spec\n\nThe parser must reject\nduplicate keys.\n";
const lines = (path: string): number | undefined => ({ "src/parse.py": 10 })[path];

describe("an assessment's contract", () => {
  it("accepts a ready ruling without findings and a recut whose findings cite evidence", () => {
    expect(validateAssessment({ packet: "P01", ruling: "ready" }, "P01")).toEqual({ ok: true, assessment: { ruling: "ready", findings: [] } });
    const recut = validateAssessment({ packet: "P01", ruling: "recut", findings: [{ claim: "c", quote: "duplicate keys", fix: "f" }] }, "P01");
    expect(recut).toEqual({ ok: true, assessment: { ruling: "recut", findings: [{ claim: "c", quote: "duplicate keys", fix: "f" }] } });
  });

  it("refuses a missing or foreign file, an unknown ruling, a recut without findings or without evidence, a malformed place", () => {
    expect(validateAssessment(undefined, "P01")).toEqual({ ok: false, errors: ["no assessment file was written"] });
    const errors = (value: unknown): string[] => {
      const check = validateAssessment(value, "P01");
      return check.ok ? [] : check.errors;
    };
    expect(errors({ packet: "P02", ruling: "ready" })).toEqual(['"packet" must be "P01", not "P02"']);
    expect(errors({ packet: "P01", ruling: "maybe" })).toEqual(['"ruling" must be "ready", "recut" or "reject", not "maybe"']);
    expect(errors({ packet: "P01", ruling: "reject", findings: [] })).toEqual(['a "reject" ruling needs at least one finding saying why']);
    expect(errors({ packet: "P01", ruling: "recut", findings: [{ claim: "vague" }] })).toEqual([expect.stringContaining('a recut finding needs its evidence: a "quote"')]);
    expect(errors({ packet: "P01", ruling: "recut", findings: [{ claim: "c", where: "src/parse.py" }] })).toEqual([expect.stringContaining('"where" must be of the form path:line')]);
  });

  it("checks evidence: a quote must be in the spec (line breaks aside), a place must be an existing line", () => {
    const assessment = {
      ruling: "recut" as const,
      findings: [
        { claim: "a", quote: "must reject duplicate\n   keys" },
        { claim: "b", quote: "must accept duplicate keys" },
        { claim: "c", where: "src/parse.py:11" },
        { claim: "d", where: "src/gone.py:1" },
        { claim: "e", where: "src/parse.py:10" },
      ],
    };
    expect(evidenceProblems(assessment, { spec: SPEC, lines })).toEqual([
      'findings[1]: the quote "must accept duplicate keys" does not occur in the spec; quote it exactly',
      "findings[2]: src/parse.py:11 cites a line that does not exist (src/parse.py has 10 lines)",
      "findings[3]: src/gone.py:1 names a file that does not exist at the tip",
    ]);
  });

  it("builds the prompt from the packet, its planted files and the spec, fenced so the spec cannot close its block", () => {
    const prompt = assessorPrompt({
      id: "P01",
      goal: "g",
      packetFile: "packets/P01.toml",
      packetText: 'id = "P01"',
      planted: ["tests/test_x.py"],
      specPath: "docs/SPEC.md",
      specCommit: "abc",
      spec: "a ``` b",
      outputPath: ".factory/assessment.json",
    });
    expect(prompt).toContain('```toml\nid = "P01"\n```');
    expect(prompt).toContain("````markdown\na ``` b\n````");
    expect(prompt).toContain("- `tests/test_x.py`");
    expect(prompt).toContain("Write this JSON to `.factory/assessment.json`");
  });
});

describe("require_assessment", () => {
  const TIERS = ["basic", "standard", "advanced", "max"];
  const packet = (id: string, tier: string): Packet => ({ id, tier, sha256: `v-${id}` }) as Packet;

  it("asks for a ruling by policy: none never, all always, advanced from the tier named advanced up (else the strongest)", () => {
    expect(needsAssessment("none", TIERS, "max")).toBe(false);
    expect(needsAssessment("all", TIERS, "basic")).toBe(true);
    expect(["basic", "standard", "advanced", "max"].map((tier) => needsAssessment("advanced", TIERS, tier))).toEqual([false, false, true, true]);
    expect(["low", "high"].map((tier) => needsAssessment("advanced", ["low", "high"], tier))).toEqual([false, true]);
  });

  it("refuses no ruling, a ruling on another version and a ruling other than ready; passes a ready one on this version", () => {
    const rulings: Record<string, { sha256: string; ruling: string }> = { B: { sha256: "old", ruling: "ready" }, C: { sha256: "v-C", ruling: "reject" }, D: { sha256: "v-D", ruling: "ready" } };
    const refused = assessmentRefusals({ packets: ["A", "B", "C", "D"].map((id) => packet(id, "basic")), tiers: TIERS, policy: "all", ruling: (id) => rulings[id] });
    expect(refused.map(({ packet: { id }, problem }) => [id, problem])).toEqual([
      ["A", expect.stringContaining("A has no assessment")],
      ["B", expect.stringContaining("on an older version of the packet")],
      ["C", expect.stringContaining('was assessed "reject"')],
    ]);
  });
});
