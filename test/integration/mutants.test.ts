import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";
import { pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

const setUp = useLoopRepos(afterEach);

/** A planted test that asserts only that the function exists: it passes for any body. */
const WEAK_TEST = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { double } from "../src/double.js";\n\ntest("double exists", () => {\n  assert.equal(typeof double, "function");\n});\n`;

const implement = { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } };

describe("mutants of a landed packet", () => {
  it("are killed by strong planted tests: every mutant of `return n * 2;` fails them", async () => {
    const target = setUp({ script: implement, config: "\n[planning]\nmutants = 20\nmutants_share = 0\n" });
    const ran = await target.run();
    expect(ran.code).toBe(0);
    expect(ran.out).toContain("P01: mutants: 3 of 3 mutants killed");
    const measured = (await target.events("P01")).find((event) => event.kind === "mutants-measured");
    expect(measured).toMatchObject({ made: 3, killed: 3, budget: 20, killedExample: { file: "src/double.js", line: 2 } });
    expect((await target.record("P01"))?.mutants).toMatchObject({ made: 3, killed: 3 });
  });

  it("survive a planted test that only asserts the function exists: the packet lands and is flagged, in the brief too", async () => {
    const target = setUp({ script: implement, planted: WEAK_TEST, config: "\n[planning]\nmutants = 20\nmutants_share = 0\n" });
    const ran = await target.run();
    expect(ran.code).toBe(0); // it landed: the check judges the tests, not the work
    expect(ran.out).toContain("P01: mutants: 0 of 3 mutants killed: its tests cannot tell this code from a broken one");
    const measured = (await target.events("P01")).find((event) => event.kind === "mutants-measured");
    expect(measured).toMatchObject({ made: 3, killed: 0, survivors: [expect.objectContaining({ file: "src/double.js", line: 2, description: '"*" -> "/"' }), expect.anything(), expect.anything()] });
    const brief = /morning brief: factory report \(also (.+)\)/.exec(ran.out)?.[1];
    // The brief's path is printed relative to this process's directory, not the target's.
    const text = readFileSync(resolve(String(brief).replace(/\.html$/, ".txt")), "utf8");
    expect(text).toContain("its tests cannot tell this code from a broken one: its planted tests killed none of 3 mutants of its changed lines");
  });

  it("stop at the mutation check's share of the night: the first mutant runs, the rest are said not run, in the brief too", async () => {
    const target = setUp({ script: implement, config: "\n[planning]\nmutants = 20\nmutants_share = 0.000001\n" });
    const ran = await target.run();
    expect(ran.code).toBe(0);
    expect(ran.out).toContain("P01: mutants: 1 of 1 mutants killed; 2 more not run: the mutation check's share of the night ran out ([planning] mutants_share)");
    expect((await target.events("P01")).find((event) => event.kind === "mutants-measured")).toMatchObject({ made: 1, killed: 1, unrun: 2 });
    const brief = /morning brief: factory report \(also (.+)\)/.exec(ran.out)?.[1];
    expect(readFileSync(resolve(String(brief).replace(/\.html$/, ".txt")), "utf8")).toContain("mutants: 2 more not run");
  });

  it("past the share, a later landed packet is not measured at all, and says why", async () => {
    const target = setUp({
      script: { ...implement, P02: { implementer: [{ write: { "src/triple.js": "export function triple(n) {\n  return n * 3;\n}\n" } }] } },
      config: "\n[planning]\nmutants = 20\nmutants_share = 0.000001\n",
    });
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
    target.write("packets/supplied/P02/test/triple.test.js", target.read("packets/supplied/P01/test/double.test.js").replaceAll("double", "triple").replace("42", "63"));
    target.commit("a second packet");
    const ran = await target.run();
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toContain("P01: mutants: 1 of 1 mutants killed; 2 more not run");
    expect(ran.out).toContain("P02: mutants: not measured: the mutation check's share of the night ran out before it ([planning] mutants_share)");
  });

  it("stop a mutant that loops for ever after a few times the landed run, and count it killed", async () => {
    const looping = "export function double(n) {\n  let left = n;\n  let sum = 0;\n  while (left > 0) {\n    left = left - 1;\n    sum = sum + 2;\n  }\n  return sum;\n}\n";
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": looping } }] } }, config: "\n[planning]\nmutants = 20\nmutants_share = 0\n" });
    const ran = await target.run();
    expect(ran.code).toBe(0);
    const measured = (await target.events("P01")).find((event) => event.kind === "mutants-measured");
    // `left - 1` made `left + 1` (and its like) never ends: stopped, and killed by it.
    expect(measured).toMatchObject({ killed: (measured as { made: number }).made });
    expect((measured as { timedOut?: number }).timedOut).toBeGreaterThanOrEqual(1);
    expect(ran.out).toMatch(/P01: mutants: (\d+) of \1 mutants killed \(\d+ stopped past the time limit, counted killed\)/);
  });

  it("a run killed during its mutation check: the next run measures the landing once, and its brief names what the killed run merged (issue 57 §5)", async () => {
    const target = setUp({ script: implement, config: "\n[planning]\nmutants = 20\nmutants_share = 0\n" });
    const killed = runCli(["run"], target.dir, { FACTORY_CRASH_AT: "run-in-mutation-check" }, 150_000);
    expect(killed.code, killed.stderr).not.toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P01"))?.mutants).toBeUndefined();

    const next = await target.run();
    expect(next.code, next.out).toBe(0);
    expect(next.out).toContain("P01: mutants: 3 of 3 mutants killed");
    const brief = /morning brief: factory report \(also (.+)\)/.exec(next.out)?.[1];
    const text = readFileSync(resolve(String(brief).replace(/\.html$/, ".txt")), "utf8");
    expect(text).not.toMatch(/Merged \(0\)/);
    expect(text).toMatch(/Merged \(1\)[\s\S]*P01/);

    // Once: a third run measures nothing again.
    const third = await target.run();
    expect(third.out).not.toContain("mutants:");
    expect((await target.events("P01")).filter((event) => event.kind === "mutants-measured")).toHaveLength(1);
  });

  it("stay within [planning] mutants, and are not made at all with mutants = 0", async () => {
    const budgeted = setUp({ script: implement, config: "\n[planning]\nmutants = 2\nmutants_share = 0\n" });
    await budgeted.run();
    expect((await budgeted.events("P01")).find((event) => event.kind === "mutants-measured")).toMatchObject({ made: 2, killed: 2, budget: 2 });
    const off = setUp({ script: implement, config: "\n[planning]\nmutants = 0\n" });
    const ran = await off.run();
    expect(ran.out).toContain("P01#1 → merged");
    expect((await off.events("P01")).filter((event) => event.kind === "mutants-measured")).toEqual([]);
  });
});

describe.skipIf(!pytestAvailable("the Python mutants test"))("mutants of a landed Python packet", () => {
  const queue = usePythonQueue(afterEach);

  it("are made by the AST mutator and killed by its planted pytest test", async () => {
    const target = queue.track(makeRepo({ initialCommit: false }));
    writePythonProject(target, { config: `${queue.agentConfig}\n[planning]\nmutants = 20\nmutants_share = 0\n` });
    const spec = target.commit("project");
    queueDoublePacket(target, spec);
    const ran = await queue.run(target, { P01: { implementer: [{ write: { "pkg/double.py": "def double(n):\n    return n * 2\n" } }] } });
    expect(ran.code).toBe(0);
    const measured = ran.events.find((event) => event.kind === "mutants-measured");
    // `return n * 2`: its value dropped, the statement dropped, * → //, 2 → 3: each fails double(21) == 42.
    expect(measured).toMatchObject({ made: 4, killed: 4 });
  });
});
