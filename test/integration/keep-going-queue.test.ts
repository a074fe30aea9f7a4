import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/** A night's queue: 30 packets, 3 of which block, each for its own reason. With on_block = "continue", the other 27 land. */
const setUp = useLoopRepos(afterEach);

const ids = Array.from({ length: 30 }, (_, index) => `P${String(index + 1).padStart(2, "0")}`);
const fileOf = (id: string): string => `src/${id.toLowerCase()}.js`;
const BLOCKING: Record<string, object> = {
  P05: { result: { status: "blocked", blocked_reason: "the brief asks for two contradicting formats" } },
  P15: { write: { "src/elsewhere.js": "export const x = 1;\n" } }, // out of scope
  P25: { write: { "src/calc.js": "export const add = (a, b) => a + b;\n" } }, // a forbidden path
};

describe('on_block = "continue" over a 30-packet queue', () => {
  it("runs all 27 packets that do not block; the run ends with exit 1 naming the 3 that did", async () => {
    const script: Record<string, { implementer: object[] }> = { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } };
    for (const id of ids.slice(1)) {
      const work = { write: { [fileOf(id)]: `export const ${id.toLowerCase()} = () => "${id}";\n` } };
      script[id] = { implementer: [BLOCKING[id] ?? work] };
    }
    const target = setUp({ config: 'on_block = "continue"', script });
    for (const id of ids.slice(1)) {
      target.write(
        `packets/${id}-p.toml`,
        `id = "${id}"\ngoal = "Packet ${id}"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\nallowed_paths = ["${fileOf(id)}"]\nforbidden_paths = ["src/calc.js"]\nbrief = "Add ${fileOf(id)}."\n[[invariants]]\nid = "exports"\nassert = "it exports ${id.toLowerCase()}"\n`,
      );
    }
    target.commit("29 more packets");

    const { code, out } = await target.run();
    expect(out).toMatch(/P05#\d → blocked: .*the brief asks for two contradicting formats/);
    expect(out).toMatch(/P15#2 → blocked: out of attempts \(2\/2\): gate scope failed: src\/elsewhere\.js/);
    expect(out).toMatch(/P25#2 → blocked: out of attempts \(2\/2\): gate untouched failed: src\/calc\.js: forbidden path was modified/);
    expect(out).toMatch(/run halted: the rest of the queue ran; blocked: P05, P15, P25/);
    expect(code).toBe(1);
    const merged = ids.filter((id) => !BLOCKING[id]);
    expect(merged).toHaveLength(27);
    for (const id of merged) expect((await target.record(id))?.status.state, id).toBe("merged");
    expect(target.subjects().filter((subject) => subject.startsWith("feat: "))).toHaveLength(27);
    expect(target.targetTestsPass()).toBe(true);
  }, 600_000);
});

describe("a packet at fault itself", () => {
  it("never counts toward 'two in a row' (the machine or the spec): two defective packets in a row, then an honest one merges; each says to edit its packet file", async () => {
    const passingAlready = `import assert from "node:assert/strict";\nimport test from "node:test";\n\ntest("already true", () => {\n  assert.equal(1 + 1, 2);\n});\n`;
    const target = setUp({ config: 'on_block = "continue"', planted: passingAlready, script: { P03: { implementer: [{ write: { "src/p03.js": "export const p03 = 3;\n" } }] } } });
    for (const id of ["P02", "P03"]) {
      target.write(
        `packets/${id}-p.toml`,
        `id = "${id}"\ngoal = "Packet ${id}"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\nallowed_paths = ["src/${id.toLowerCase()}.js"]\nbrief = "Add src/${id.toLowerCase()}.js."\n[[invariants]]\nid = "exports"\nassert = "it exports"\n`,
      );
    }
    target.write("packets/supplied/P02/test/p02.test.js", passingAlready.replace("already true", "also true"));
    target.commit("two more packets");
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 → blocked: planted tests cannot tell right from wrong/);
    expect(out).toMatch(/P02#1 → blocked: planted tests cannot tell right from wrong/);
    expect(out).not.toContain("the machine or the spec");
    expect(out).toContain("P03#1 → merged");
    expect(out).toContain("P01 is blocked: planted tests cannot tell right from wrong");
    expect(out).toContain("then edit packets/P01-double.toml or its planted files under packets/supplied/P01/ and commit: a changed packet is a new version and runs afresh");
    expect(code).toBe(1);
  });
});
