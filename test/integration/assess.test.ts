import { afterEach, describe, expect, it } from "vitest";
import { assess } from "../../src/commands/assess.js";
import { lint } from "../../src/commands/lint.js";
import { show } from "../../src/commands/show.js";
import { bufferOutput } from "../../src/log/output.js";
import { type LoopRepo, type LoopRepoOptions, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

/** P02: a second packet beside the loop repository's P01 (it triples; nothing planted). */
const P02 = (spec: string, tier = "standard"): string => `id = "P02"
goal = "Add triple"
spec_commit = "${spec}"
spec_path = "docs/SPEC.md"
tier = "${tier}"
allowed_paths = ["src/triple.js"]
brief = '''
Add src/triple.js exporting triple(n).
'''

[[invariants]]
id = "triples"
assert = "triple(n) is n * 3"
`;

function withP02(options: LoopRepoOptions, tier?: string): LoopRepo {
  const target = setUp(options);
  target.write("packets/P02-triple.toml", P02(target.spec, tier));
  target.commit("queue P02");
  return target;
}

async function assessIn(target: LoopRepo, ids: string[], extra: { all?: boolean; tier?: string } = {}): Promise<{ code: number; out: string; stdout: string }> {
  const output = bufferOutput();
  const code = await assess({ cwd: target.dir, ids, all: Boolean(extra.all), tier: extra.tier, output, signal: new AbortController().signal });
  return { code, out: output.text(), stdout: output.stdout.join("\n") };
}

const RECUT = {
  ruling: "recut",
  findings: [{ claim: "the spec asks to double, not to triple", quote: "Double\n  things.", where: "src/calc.js:2", fix: "cut it from the spec" }],
};

describe("factory assess", () => {
  it("rules ready and recut, recording each ruling on the packet's version with its calls and their cost", async () => {
    const target = withP02({ script: { P01: { assessor: [{ ruling: "ready", cost: 0.03 }] }, P02: { assessor: [{ ...RECUT, cost: 0.05 }] } } });
    const assessed = await assessIn(target, ["P01", "P02"]);
    expect(assessed.code).toBe(1); // one packet is not ready
    expect(assessed.stdout).toMatch(/P01\s+ready\s+0\s+\$0\.03/);
    expect(assessed.stdout).toMatch(/P02\s+recut\s+1\s+\$0\.05/);
    expect(assessed.stdout).toContain('spec: "Double things."');

    const rulings = (await target.events()).filter((event) => event.kind === "assessed");
    expect(rulings).toEqual([
      expect.objectContaining({ packet: "P01", ruling: "ready", tier: "advanced", findings: [] }),
      expect.objectContaining({ packet: "P02", ruling: "recut", findings: [{ claim: RECUT.findings[0]?.claim, quote: "Double\n  things.", where: "src/calc.js:2" }] }),
    ]);
    const calls = (await target.events()).filter((event) => event.kind === "agent-finished");
    expect(calls).toEqual([
      expect.objectContaining({ packet: "P01", attempt: 0, role: "assessor", costUsd: 0.03, tier: "advanced", model: "m-advanced" }),
      expect.objectContaining({ packet: "P02", attempt: 0, role: "assessor", costUsd: 0.05 }),
    ]);
    // The ruling is pinned to the version the run would claim.
    const registered = await target.record("P01");
    expect(registered?.assessment).toMatchObject({ ruling: "ready", tier: "advanced" });
    expect(registered?.costUsd).toBeCloseTo(0.03);

    const shown = bufferOutput();
    await show({ cwd: target.dir, id: "P02", output: shown });
    expect(shown.text()).toContain("assessment: recut (tier advanced");
    expect(shown.text()).toContain(", on this version");
    expect(shown.text()).toContain("assessor (advanced m-advanced): ok");
    expect(shown.text()).toContain("finding src/calc.js:2: the spec asks to double, not to triple");
  });

  it("refuses a quote that is not in the spec and a line that does not exist, asks once for a correction, and records nothing when it stays wrong", async () => {
    const forged = {
      ruling: "reject",
      findings: [
        { claim: "the spec forbids doubling", quote: "Never double anything." },
        { claim: "calc is broken", where: "src/calc.js:40" },
      ],
    };
    const target = setUp({ script: { P01: { assessor: [{ ...forged, correction: forged }] } } });
    const assessed = await assessIn(target, ["P01"]);
    expect(assessed.code).toBe(1);
    expect(assessed.stdout).toMatch(/P01\s+unusable/);
    expect(assessed.stdout).toContain('the quote "Never double anything." does not occur in the spec');
    expect(assessed.stdout).toContain("src/calc.js:40 cites a line that does not exist (src/calc.js has 3 lines)");
    const events = await target.events();
    expect(events.filter((event) => event.kind === "assessed")).toEqual([]);
    // Both calls were paid for and are on record, the correction resuming the first.
    expect(events.filter((event) => event.kind === "agent-finished").map((event) => event.kind === "agent-finished" && event.role)).toEqual(["assessor", "assessor"]);
  });

  it("records the corrected ruling when the correction round cites the spec truly", async () => {
    const target = setUp({ script: { P01: { assessor: [{ ruling: "reject", findings: [{ claim: "x", quote: "Triple things." }], correction: RECUT }] } } });
    const assessed = await assessIn(target, ["P01"]);
    expect(assessed.code).toBe(1);
    expect(assessed.stdout).toMatch(/P01\s+recut/);
    expect((await target.events()).filter((event) => event.kind === "assessed")).toEqual([expect.objectContaining({ ruling: "recut" })]);
  });

  it("stops calling at [planning] max_cost_usd and says which packets were not assessed", async () => {
    const target = withP02({ script: { P01: { assessor: [{ cost: 0.4 }] }, P02: { assessor: [{ cost: 0.4 }] } }, config: "\n[planning]\nmax_cost_usd = 0.3\n" });
    const assessed = await assessIn(target, [], { all: true });
    expect(assessed.code).toBe(1);
    expect(assessed.stdout).toMatch(/P01\s+ready/);
    expect(assessed.stdout).toContain("P02: not assessed: [planning] max_cost_usd ($0.30) is reached; raise it, or assess the rest another time (factory assess P02)");
    expect((await target.events()).filter((event) => event.kind === "agent-finished")).toHaveLength(1);
  });

  it("refuses bad input with exit 2: no packet named, an unknown id, an unknown tier", async () => {
    const target = setUp({ script: {} });
    expect((await assessIn(target, [])).out).toContain("name the packets to assess");
    expect((await assessIn(target, [])).code).toBe(2);
    const unknown = await assessIn(target, ["P09"]);
    expect([unknown.code, unknown.out]).toEqual([2, expect.stringContaining('no packet "P09" on main')]);
    const tier = await assessIn(target, ["P01"], { tier: "huge" });
    expect([tier.code, tier.out]).toEqual([2, expect.stringContaining('no tier "huge" with an agent')]);
    expect(await target.events()).toEqual([]);
  });
});

describe("[planning] require_assessment", () => {
  const ALL = '\n[planning]\nrequire_assessment = "all"\nmutants = 0\n';

  it("makes run refuse an unassessed packet before anything is claimed or spent, and lint name it", async () => {
    const target = withP02({ script: { P01: { assessor: [{ ruling: "ready" }] } }, config: ALL });
    expect((await assessIn(target, ["P01"])).code).toBe(0);
    const refused = await target.run();
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('factory run refused: P02 has no assessment, and [planning] require_assessment = "all" asks for a ready one; `factory assess P02` rules on it');
    expect(refused.out).not.toContain("P01 has no assessment");
    const events = await target.events();
    expect(events.filter((event) => event.kind !== "agent-started" && event.kind !== "agent-finished" && event.kind !== "assessed")).toEqual([]); // only the assessment of P01
    const linted = bufferOutput();
    expect(await lint({ cwd: target.dir, ids: [], json: false, output: linted })).toBe(2);
    expect(linted.text()).toContain("packets/P02-triple.toml: P02 has no assessment");
  });

  it("lets a packet with a ready ruling on its version run, and refuses it again once the packet changed", async () => {
    const target = setUp({ script: { P01: { assessor: [{ ruling: "ready" }], implementer: [{ write: { "src/double.js": "export function double(n) {\n  return n * 2;\n}\n" } }] } }, config: ALL });
    await assessIn(target, ["P01"]);
    const linted = bufferOutput();
    expect(await lint({ cwd: target.dir, ids: [], json: false, output: linted })).toBe(0);
    // A changed packet is another version: its ruling no longer counts.
    target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace("Add double", "Add double, carefully"));
    target.commit("reword P01");
    const refused = await target.run();
    expect([refused.code, refused.out]).toEqual([2, expect.stringContaining("P01 was assessed (ready) on an older version of the packet; `factory assess P01` rules on this one")]);
    await assessIn(target, ["P01"]);
    const ran = await target.run();
    expect(ran.out).toContain("P01#1 → merged");
    expect(ran.code).toBe(0);
  });

  it('refuses a packet ruled recut, and under "advanced" asks only packets of the advanced tier', async () => {
    const target = withP02({ script: { P01: { assessor: [RECUT] } }, config: '\n[planning]\nrequire_assessment = "advanced"\n' }, "advanced");
    await assessIn(target, ["P01"]);
    const refused = await target.run();
    expect(refused.code).toBe(2);
    // P01 is of the default tier (basic): not asked, recut or not. P02 is advanced and unassessed.
    expect(refused.out).toContain("P02 has no assessment");
    expect(refused.out).not.toContain("P01");
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('require_assessment = "advanced"', 'require_assessment = "all"'));
    target.commit("assess everything");
    const all = await target.run();
    expect(all.out).toContain('P01 was assessed "recut" (`factory show P01` has the findings); change the packet and `factory assess P01` again');
  });
});
