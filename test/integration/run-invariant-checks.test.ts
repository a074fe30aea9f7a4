import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Issue 23: an invariant may carry `check = "command"`. The factory runs it on the gated tree, in the
 * sandbox, like a gate; its exit status is the invariant's ruling, whatever the reviewer says.
 */
const setUp = useLoopRepos(afterEach);

/** The team's executable form of "double(n) is n * 2", on inputs the planted test does not use. */
const CHECK = `import { double } from "../src/double.js";\nfor (const n of [0, 1, -3, 1000]) if (double(n) !== n * 2) { console.log(\`double(\${n}) is \${double(n)}\`); process.exit(1); }\n`;
/** Passes the planted test (double(21) is 42) by special-casing its input, and nothing else. */
const SPECIAL_CASED = "export function double(n) {\n  return n === 21 ? 42 : n + 1;\n}\n";

function withCheck(target: LoopRepo): LoopRepo {
  target.write("checks/doubles.mjs", CHECK);
  target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace('assert = "double(n) is n * 2"', 'assert = "double(n) is n * 2"\ncheck = "node checks/doubles.mjs"'));
  target.commit("an executable invariant");
  return target;
}

describe("an invariant with a check", () => {
  it("is violated when its check fails, however the reviewer rules: code special-cased to the planted input does not land", async () => {
    const target = withCheck(setUp({ script: { P01: { implementer: [{ write: { "src/double.js": SPECIAL_CASED } }], reviewer: [{ invariants: "held" }] } } }));
    const { code, out } = await target.run();
    expect(out).toMatch(/gate invariant-doubles: fail — violated: its check failed \(exit 1\)/);
    expect(out).not.toContain("→ merged");
    expect(code).toBe(1);
    expect(target.exists("src/double.js")).toBe(false);
  }, 60_000);

  it("is held when its check passes: the work merges, and a reviewer who rules it violated is overridden, recorded as such", async () => {
    const target = withCheck(setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }], reviewer: [{ verdict: "accept", invariants: "violated" }] } } }));
    const { code, out } = await target.run();
    expect(out).toMatch(/gate invariant-doubles: pass — held: its check passed/);
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const review = (await target.events("P01")).find((event) => event.kind === "review-recorded");
    expect(review).toMatchObject({ effective: "accept", overrides: ['reviewer ruled invariant "doubles" violated, but its check passed: held'] });
  }, 60_000);

  describe("whose files the change edits", () => {
    /** The check reads its cases from a file beside it. */
    const DATA_CHECK = `import { readFileSync } from "node:fs";\nimport { double } from "../src/double.js";\nconst cases = JSON.parse(readFileSync(new URL("./cases.json", import.meta.url), "utf8"));\nif (cases.length === 0) process.exit(2);\nfor (const [n, want] of cases) if (double(n) !== want) { console.log(\`double(\${n}) is \${double(n)}\`); process.exit(1); }\n`;

    function withDataCheck(target: LoopRepo): LoopRepo {
      target.write("checks/doubles.mjs", DATA_CHECK);
      target.write("checks/cases.json", "[[0, 0], [1, 2], [-3, -6]]\n");
      target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace('assert = "double(n) is n * 2"', 'assert = "double(n) is n * 2"\ncheck = "node checks/doubles.mjs"'));
      target.commit("an executable invariant reading its cases");
      return target;
    }

    it.each([
      ["makes the check script pass whatever it is given", { "checks/doubles.mjs": "process.exit(0);\n" }],
      ["changes the cases file beside the check to what the special case gets right", { "checks/cases.json": "[[21, 42]]\n" }],
    ])(
      "work that %s is still violated: the check runs as the tip has it",
      async (_how, edits) => {
        const target = withDataCheck(
          setUp({ allowed: ["src/double.js", "checks/**"], script: { P01: { implementer: [{ write: { "src/double.js": SPECIAL_CASED, ...edits } }], reviewer: [{ invariants: "held" }] } } }),
        );
        const { code, out } = await target.run();
        expect(out).toMatch(/gate invariant-doubles: fail — violated: its check failed \(exit 1\) \(run with the tip's checks\/\S+: the change edits what the check is made of\)/);
        expect(out).not.toContain("→ merged");
        expect(code).toBe(1);
      },
      60_000,
    );

    it("honest work that also improves the check in its own packet merges: the tip's check holds it, the improved one lands", async () => {
      const better = "[[0, 0], [1, 2], [-3, -6], [1000, 2000], [7, 14]]\n";
      const target = withDataCheck(setUp({ allowed: ["src/double.js", "checks/**"], script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS, "checks/cases.json": better } }] } } }));
      const { code, out } = await target.run();
      expect(out).toMatch(/gate invariant-doubles: pass — held: its check passed \(run with the tip's checks\/cases\.json/);
      expect(out).toContain("P01#1 → merged");
      expect(code).toBe(0);
      expect(target.read("checks/cases.json")).toBe(better);
    }, 60_000);
  });
});
