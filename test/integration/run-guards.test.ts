import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, DOUBLE_TEST, gateResults, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

const honest = { write: { "src/double.js": DOUBLE_JS } };

/** The packet never merged: the target is where it was, its tests pass, and the ledger says blocked. */
async function expectNeverMerged(target: LoopRepo): Promise<void> {
  expect(target.subjects()).toEqual(["queue", "project and spec"]);
  expect(target.targetTestsPass()).toBe(true);
  expect((await target.record("P01"))?.status.state).toBe("blocked");
}

describe("factory run: honest work", () => {
  it("merges, with every guard quiet, one commit with its trailers", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const events = await target.events("P01");
    expect(gateResults(events, 1)).toEqual({ untouched: "pass", scope: "pass", tamper: "pass", syntax: "pass", test: "pass" });
    const review = events.find((event) => event.kind === "review-recorded");
    expect(review).toMatchObject({ verdict: "accept", effective: "accept", overrides: [], held: 1 });
    expect(target.subjects()).toEqual(["feat: Add double [P01]", "queue", "project and spec"]);
    const body = target.git("log", "-1", "--format=%B", "main");
    expect(body).toContain("Factory-Packet: P01");
    expect(body).toContain("Factory-Attempt: 1");
    expect(body).toContain("Factory-Gates: untouched=pass scope=pass tamper=pass syntax=pass test=pass");
    expect(body).toContain("Factory-Invariants: held=1 violated=0 unverifiable=0");
    expect(target.read("src/double.js")).toBe(DOUBLE_JS); // the user's checkout was fast-forwarded
    expect(target.git("status", "--porcelain")).toBe("");
    expect(target.targetTestsPass()).toBe(true);
    expect(target.git("worktree", "list").trim().split("\n")).toHaveLength(1); // the task worktree is gone
    expect(target.git("branch", "--list", "factory/*").trim()).toBe("");
  });

  it("retries with the failure as feedback, then merges", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export function double(n) {\n  return n + 2;\n}\n" } }, honest] } } });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toMatch(/P01#1 → retry: gate test failed: 1 planted test\(s\) not passing of 2/);
    expect(out).toContain("P01#2 → merged");
    const prompt = target.read(".factory/runs/P01/attempt-2/implementer-prompt.md");
    expect(prompt).toContain("what failed last time");
    expect(prompt).toContain('Gate "test" failed');
    expect(target.subjects()[0]).toBe("feat: Add double [P01]");
  });
});

describe("factory run: the implementer starts from exactly the planted tree", () => {
  /** Nothing but the packet's own work lands: no file the install or a gate run left in the worktree. */
  function expectLandedWithout(target: LoopRepo, out: string, code: number, left: string): void {
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.git("ls-tree", "-r", "--name-only", "main").split("\n")).not.toContain(left);
  }

  it("a file the install leaves in the worktree is not the implementer's work", async () => {
    const syntaxOnly = `
  [[surfaces.app.gates]]
  name = "syntax"
  run = "for f in {files}; do node --check \\"$f\\" || exit 1; done"
  files = "**/*.js"
`;
    const target = setUp({ gates: syntaxOnly, planted: null, script: { P01: { implementer: [honest] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."', 'dir = "."\ninstall = "echo left > install-left.txt"'));
    target.commit("an install that leaves a file");
    const { code, out } = await target.run();
    expectLandedWithout(target, out, code, "install-left.txt");
  });

  it("a file the baseline's gate run leaves in the worktree is not the implementer's work", async () => {
    // P00, on a surface without a tests gate, lands first: the tip moves with no gate results to seed the
    // next baseline, so P01's baseline is measured in P01's own worktree, by a gate that leaves a file there.
    const docs = `\n[surfaces.docs]\ndir = "docs"\n\n[[surfaces.docs.gates]]\nname = "present"\nrun = "true"\n`;
    const notes = { write: { "docs/notes.md": "Notes.\n" } };
    // No planted test: the check of planted tests (which restores the worktree after it) does not run.
    const target = setUp({ config: docs, planted: null, script: { P00: { implementer: [notes] }, P01: { implementer: [honest] } } });
    const config = target.read(".factory/config.toml");
    target.write(".factory/config.toml", config.replace(/test\/"\n(\s*)tests = true/, 'test/ && echo left > gate-left.txt"\n$1tests = true'));
    expect(target.read(".factory/config.toml")).toContain("gate-left.txt");
    target.write(
      "packets/P00-notes.toml",
      `id = "P00"\ngoal = "Add notes"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\nsurface = "docs"\nallowed_paths = ["docs/notes.md"]\nbrief = "Add docs/notes.md."\n\n[[invariants]]\nid = "noted"\nassert = "docs/notes.md exists"\n`,
    );
    target.commit("a tests gate that leaves a file, and a packet on another surface first");
    const { code, out } = await target.run();
    expect(out).toContain("P00#1 → merged");
    expect((await target.events("P01")).find((event) => event.kind === "baseline-measured")).toMatchObject({ cached: false });
    expectLandedWithout(target, out, code, "gate-left.txt");
  });
});

describe("factory run: auto-fix", () => {
  const tabsGate = `
  [[surfaces.app.gates]]
  name = "no-tabs"
  run = "! grep -l \\"$(printf '\\\\t')\\" {files}"
  files = "**/*.js"
  fix = "sed -i \\"s/$(printf '\\\\t')/  /g\\" {files}"

  [[surfaces.app.gates]]
  name = "test"
  run = "node --test --test-reporter=junit --test-reporter-destination={junit} $(find test -type f -name '*.*js' | sort)"
  tests = true
`;

  it("repairs the agent's files in a commit of its own, spends no attempt, and never touches planted files", async () => {
    const plantedWithTab = DOUBLE_TEST.replace('test("doubles"', '// keep\ttabs here\ntest("doubles"');
    const target = setUp({ gates: tabsGate, planted: plantedWithTab, script: { P01: { implementer: [{ write: { "src/double.js": "export function double(n) {\n\treturn n * 2;\n}\n" } }] } } });
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 auto-fix no-tabs: committed/);
    expect(code).toBe(0);
    expect(gateResults(await target.events("P01"), 1)).toMatchObject({ "no-tabs": "pass", untouched: "pass" });
    expect(target.read("src/double.js")).toBe("export function double(n) {\n  return n * 2;\n}\n");
    expect(target.read("test/double.test.js")).toContain("keep\ttabs"); // the planted file was left alone
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
  });
});

describe("factory run: the guards fire", () => {
  it("untouched: an agent that edits a planted test is never merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export const double = () => 0;\n", "test/double.test.js": "// gone\n" } }] } } });
    const { code } = await target.run();
    expect(code).toBe(1);
    expect(gateResults(await target.events("P01"), 1).untouched).toBe("fail");
    await expectNeverMerged(target);
  });

  it("untouched: an agent that edits a forbidden path is never merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, append: { "src/calc.js": "// touched\n" } }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(gateResults(events, 1).untouched).toBe("fail");
    expect(events.find((event) => event.kind === "gate-finished" && event.gate === "untouched")).toMatchObject({ detail: expect.stringContaining("src/calc.js: forbidden path was modified") });
    await expectNeverMerged(target);
  });

  it("untouched: an agent that edits the queue or the factory config is never merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, append: { ".factory/config.toml": "\n# loosened\n" } }] } } });
    await target.run();
    expect(gateResults(await target.events("P01"), 1).untouched).toBe("fail");
    await expectNeverMerged(target);
  });

  it("scope: an agent that touches a file outside allowed_paths is never merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { ...honest.write, "src/extra.js": "export const x = 1;\n" } }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(gateResults(events, 1)).toMatchObject({ scope: "fail", untouched: "pass", tamper: "pass" });
    await expectNeverMerged(target);
  });

  it("scope: an agent that deletes a file not in deletable_paths is never merged", async () => {
    const target = setUp({ allowed: ["src/double.js", "README.md"], script: { P01: { implementer: [{ ...honest, delete: ["package.json"] }] } } });
    await target.run();
    expect(gateResults(await target.events("P01"), 1).scope).toBe("fail");
    await expectNeverMerged(target);
  });

  it("tamper: an agent that adds a skip marker to an existing test is never merged", async () => {
    const calcTest = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest.skip("adds", () => {\n  assert.equal(add(2, 2), 4);\n});\n`;
    const target = setUp({ allowed: ["src/double.js", "test/calc.test.js"], forbidden: [], script: { P01: { implementer: [{ write: { ...honest.write, "test/calc.test.js": calcTest } }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(gateResults(events, 1)).toMatchObject({ tamper: "fail", scope: "pass", untouched: "pass" });
    // The skip rule's own finding, at the marker's line (the parsed-assertion rule also sees the test no longer run).
    expect(events.find((event) => event.kind === "gate-finished" && event.gate === "tamper")).toMatchObject({ detail: expect.stringContaining("test/calc.test.js:5: adds a skipped or todo test") });
    await expectNeverMerged(target);
  });

  it("tamper, honest twin: a team's JavaScript test reformatted and given more assertions (read by TypeScript's parser) merges", async () => {
    const more = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest("adds", () => {\n  assert.equal(\n    add(2, 2),\n    4,\n  );\n  for (const n of [0, 1, 2]) assert.equal(add(n, 0), n);\n});\n`;
    const twin = setUp({ allowed: ["src/double.js", "test/calc.test.js"], forbidden: [], script: { P01: { implementer: [{ write: { ...honest.write, "test/calc.test.js": more } }] } } });
    const { out } = await twin.run();
    expect(out).toContain("gate tamper: pass");
    expect(out).toContain("P01#1 → merged");
  });

  it("tamper: a .gitattributes that changes bytes between the tested checkout and the commit (ident) is never merged; the common honest attributes merge", async () => {
    const sly = { write: { "src/double.js": `// $Id$\n${DOUBLE_JS}`, ".gitattributes": "src/*.js ident\n" } };
    const target = setUp({ allowed: ["src/double.js", ".gitattributes"], script: { P01: { implementer: [sly] } } });
    await target.run();
    const events = await target.events("P01");
    expect(gateResults(events, 1)).toMatchObject({ tamper: "fail" });
    expect(events.find((event) => event.kind === "gate-finished" && event.gate === "tamper")).toMatchObject({ detail: expect.stringContaining(".gitattributes:1: sets ident") });
    await expectNeverMerged(target);

    const honestAttributes = "*.lock -diff linguist-generated\n*.png -diff\n*.js diff=javascript\nCHANGELOG.md merge=union\ndocs/** linguist-documentation\n";
    const twin = setUp({ allowed: ["src/double.js", ".gitattributes"], script: { P01: { implementer: [{ write: { ...honest.write, ".gitattributes": honestAttributes } }] } } });
    const { out } = await twin.run();
    expect(out).toContain("gate tamper: pass");
    expect(out).toContain("P01#1 → merged");
    expect(twin.read(".gitattributes")).toBe(honestAttributes);
  });

  it("changed: an agent that writes nothing but claims success is never merged", async () => {
    const target = setUp({ script: { P01: { implementer: [{ result: { summary: "Done. All tests pass.", verification: { tests: "42 passed" } } }] } } });
    await target.run();
    expect(gateResults(await target.events("P01"), 1)).toMatchObject({ changed: "fail", test: "fail" });
    await expectNeverMerged(target);
  });

  it("regression: an agent that breaks a previously passing test is never merged", async () => {
    const target = setUp({
      allowed: ["src/double.js", "src/calc.js"],
      forbidden: [],
      script: { P01: { implementer: [{ write: { ...honest.write, "src/calc.js": "export function add(a, b) {\n  return a - b;\n}\n" } }] } },
    });
    await target.run();
    const gate = (await target.events("P01")).find((event) => event.kind === "gate-finished" && event.gate === "test");
    expect(gate).toMatchObject({ result: "fail", detail: expect.stringContaining("1 regression(s)") });
    await expectNeverMerged(target);
  });

  it("defective packet: planted tests that pass before any implementation block it", async () => {
    const target = setUp({ planted: DOUBLE_TEST.replace('import { double } from "../src/double.js";', "const double = (n) => n * 2;"), script: { P01: { implementer: [honest] } } });
    const { code } = await target.run();
    expect(code).toBe(1);
    const record = await target.record("P01");
    expect(record?.status).toMatchObject({
      state: "blocked",
      reason: expect.stringContaining("test/double.test.js: 1 case, 1 new, none fails before the work: plant a test that fails without the change"),
    });
    expect((await target.events("P01")).some((event) => event.kind === "agent-finished")).toBe(false); // nothing spent
    expect(record?.reason).not.toContain("already at the tip"); // src/double.js is not there: the tests are weak, nothing landed
  });

  it("a planted new version of a test the tip has, passing already, does not say the work may have landed (it is the test that changed)", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("src/double.js", DOUBLE_JS);
    target.write("test/double.test.js", `${target.read("packets/supplied/P01/test/double.test.js")}// reformatted upstream\n`);
    target.commit("the test and the module, by hand");
    expect((await target.run()).code).toBe(1);
    const record = await target.record("P01");
    expect(record?.status).toMatchObject({ state: "blocked", reason: expect.stringContaining("none fails before the work") });
    expect(record?.reason).not.toContain("already at the tip");
  });

  it("already landed: planted tests that pass at a tip already holding every file in scope say the work may be done", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("src/double.js", DOUBLE_JS);
    target.commit("someone did it by hand");
    expect((await target.run()).code).toBe(1);
    const record = await target.record("P01");
    expect(record?.status).toMatchObject({
      state: "blocked",
      reason: expect.stringContaining(
        "none fails before the work: plant a test that fails without the change; every file it may change (src/double.js) is already at the tip: the work may have landed already",
      ),
    });
    expect((await target.events("P01")).some((event) => event.kind === "agent-finished")).toBe(false); // nothing spent
  });

  it("spec drift: a spec changed since the packet was cut blocks it before anything runs", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("docs/SPEC.md", "# spec\n\nTriple things.\n");
    target.commit("spec moves on");
    const { code } = await target.run();
    expect(code).toBe(1);
    expect((await target.record("P01"))?.status).toMatchObject({ state: "blocked", reason: expect.stringContaining("docs/SPEC.md changed since the packet was cut") });
    expect((await target.events("P01")).some((event) => event.kind === "agent-finished")).toBe(false);
  });

  // An unknown spec_commit is refused by the preflight before anything is claimed: test/integration/preflight.test.ts.

  it("the implementer's own 'blocked' blocks the packet with its reason", async () => {
    const target = setUp({ script: { P01: { implementer: [{ result: { status: "blocked", blocked_reason: "the spec contradicts the tests" } }] } } });
    await target.run();
    expect((await target.record("P01"))?.status).toMatchObject({ state: "blocked", reason: expect.stringContaining("the spec contradicts the tests") });
  });

  it("a missing result file gets one correction round, then fails the attempt", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, result: null }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "agent-finished" && event.role === "implementer" && event.attempt === 1)).toHaveLength(2);
    expect(events.find((event) => event.kind === "decided" && event.attempt === 1)).toMatchObject({ reasons: [expect.stringContaining("no result file was written")] });
    await expectNeverMerged(target);
  });

  it("a result fixed in the correction round counts", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, result: "not json", correction: { result: {} } }] } } });
    const { code } = await target.run();
    expect(code).toBe(0);
    expect(target.subjects()[0]).toBe("feat: Add double [P01]");
  });
});

describe("factory run: the reviewer is overridden", () => {
  it("a red gate means no review is run at all, whatever the reviewer would say", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }], reviewer: [{ verdict: "accept" }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(events.some((event) => event.kind === "agent-finished" && event.role === "reviewer")).toBe(false);
    await expectNeverMerged(target);
  });

  it("a review that omits an invariant gets a correction round, then the next tier once; still unusable, the packet blocks and the implementer's attempt is not spent", async () => {
    const target = setUp({ packet: `reviewer = "standard"`, script: { P01: { implementer: [honest], reviewer: [{ result: { invariants: [] } }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toContain("escalated to tier advanced");
    const events = await target.events("P01");
    const reviewers = events.filter((event) => event.kind === "agent-finished" && event.role === "reviewer" && event.attempt === 1);
    expect(reviewers).toHaveLength(4); // the call and its correction, on two tiers
    expect(events.filter((event) => event.kind === "agent-finished" && event.role === "implementer")).toHaveLength(1);
    expect(events.find((event) => event.kind === "decided" && event.attempt === 1)).toMatchObject({
      decision: "block",
      refund: true,
      reasons: [expect.stringMatching(/^the reviewer could not give evidence: tier advanced: .*invariant "doubles" has no ruling/)],
    });
    expect(await target.record("P01")).toMatchObject({ attemptsUsed: 0, status: { state: "blocked" } });
    await expectNeverMerged(target);
  });

  it("evidence that does not resolve gets a correction round; corrected, the work merges on its first attempt", async () => {
    const target = setUp({ script: { P01: { implementer: [honest], reviewer: [{ evidence: "src/double.js:99", correction: { evidence: "src/double.js:2" } }] } } });
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const prompts = readdirSync(`${target.dir}/.factory/runs/P01/attempt-1`).filter((name) => name.startsWith("reviewer-correction"));
    expect(prompts).toContain("reviewer-correction-1-prompt.md");
    expect(target.read(".factory/runs/P01/attempt-1/reviewer-correction-1-prompt.md")).toContain(
      'invariant "doubles": evidence src/double.js:99 cites a line that does not exist (src/double.js has 3 lines); cite an existing line',
    );
  });

  it("evidence that never resolves blocks the packet without spending the implementer's attempt", async () => {
    const target = setUp({ packet: `reviewer = "standard"`, script: { P01: { implementer: [honest], reviewer: [{ evidence: "src/double.js:99", correction: { evidence: "src/double.js:99" } }] } } });
    const { code } = await target.run();
    expect(code).toBe(1);
    expect(await target.record("P01")).toMatchObject({ attemptsUsed: 0, status: { state: "blocked", reason: expect.stringContaining("the reviewer could not give evidence") } });
    await expectNeverMerged(target);
  });

  it("a critical invariant ruled violated overrides an accept", async () => {
    const target = setUp({ script: { P01: { implementer: [honest], reviewer: [{ invariants: "violated" }] } } });
    await target.run();
    const review = (await target.events("P01")).find((event) => event.kind === "review-recorded");
    expect(review).toMatchObject({ verdict: "accept", effective: "revise", overrides: [expect.stringContaining('critical invariant "doubles" is violated')] });
    await expectNeverMerged(target);
  });

  it("a reviewer that edits the worktree has its verdict discarded", async () => {
    const target = setUp({ script: { P01: { implementer: [honest], reviewer: [{ write: { "src/double.js": "export const double = () => 'hacked';\n" } }] } } });
    await target.run();
    const events = await target.events("P01");
    expect(events.some((event) => event.kind === "review-recorded")).toBe(false);
    const decided = events.find((event) => event.kind === "decided" && event.attempt === 1);
    expect(decided, JSON.stringify(decided)).toMatchObject({ reasons: [expect.stringContaining("the reviewer changed the worktree (src/double.js)")] });
    await expectNeverMerged(target);
  });

  it("a reviewer's reject blocks the packet", async () => {
    const target = setUp({ script: { P01: { implementer: [honest], reviewer: [{ verdict: "reject", findings: [{ severity: "blocker", claim: "wrong approach" }] }] } } });
    await target.run();
    expect((await target.record("P01"))?.status).toMatchObject({ state: "blocked", reason: expect.stringContaining("the reviewer rejected the work") });
  });
});
