import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cut } from "../../src/commands/cut.js";
import { report } from "../../src/commands/report.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_TEST_FOR, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

const SPEC = "# spec\n\nDouble things.\n\n## Arithmetic\n\nTriple things, and halve them.\n";

/** A repository whose spec has an arithmetic section, committed: the planner's script pins to its commit. */
function withSpec(): { target: LoopRepo; spec: string } {
  const target = setUp({ script: {} });
  target.write("docs/SPEC.md", SPEC);
  return { target, spec: target.commit("spec: arithmetic") };
}

const packet = (id: string, goal: string, spec: string, name: string): string => `id = "${id}"
goal = "${goal}"
spec_commit = "${spec}"
spec_path = "docs/SPEC.md"
allowed_paths = ["src/${name}.js"]
brief = '''
Add src/${name}.js exporting ${name}(n).
'''

[[invariants]]
id = "${name}s"
assert = "${name} is right"
`;

const ADD_TEST = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest("adds again", () => {\n  assert.equal(add(1, 2), 3);\n});\n`;

/** A planner step writing these files under its output directory. */
const plannerWrites = (files: Record<string, string>) => ({
  cut: { planner: [{ write: Object.fromEntries(Object.entries(files).map(([path, text]) => [`.factory/cut/${path}`, text])), cost: 0.2 }] },
});

async function cutIn(
  target: LoopRepo,
  extra: { scope?: string; scopeFile?: string; spec?: string; agent?: string; model?: string } = { scope: "the arithmetic section" },
): Promise<{ code: number; out: string; stdout: string }> {
  const output = bufferOutput();
  const code = await cut({
    cwd: target.dir,
    spec: extra.spec ?? "docs/SPEC.md",
    scope: extra.scope,
    scopeFile: extra.scopeFile,
    tier: undefined,
    agent: extra.agent,
    model: extra.model,
    output,
    signal: new AbortController().signal,
  });
  return { code, out: output.text(), stdout: output.stdout.join("\n") };
}

function refusedDir(target: LoopRepo): string {
  const runs = readdirSync(join(target.dir, ".factory/runs")).filter((name) => name.startsWith("cut-"));
  return join(target.dir, ".factory/runs", runs.at(-1) ?? "", "refused");
}

describe("factory cut", () => {
  it("--agent plans with a model of that agent: another provider's is refused before any call, naming both", async () => {
    const target = setUp({ script: {}, config: '\n[agents.claude]\nkind = "claude"\n' });
    target.write("docs/SPEC.md", SPEC);
    target.commit("spec: arithmetic");
    const noTier = await cutIn(target, { scope: "the arithmetic section", agent: "claude" });
    expect(noTier.code).toBe(2);
    expect(noTier.out).toContain('factory cut: no tier in .factory/config.toml uses agent "claude", so there is no model of it to plan with; pass --model');
    const foreign = await cutIn(target, { scope: "the arithmetic section", agent: "claude", model: "gemini-2.5-pro" });
    expect(foreign.code).toBe(2);
    expect(foreign.out).toContain(`factory cut: --agent claude: model "gemini-2.5-pro" is Google's, which the claude agent cannot run`);
    expect(existsSync(join(target.dir, ".factory/runs"))).toBe(false); // nothing ran, nothing was paid
  });

  it("accepts proposals whose planted tests fail at the tip and refuses one that passes already, invalid TOML and a repeated goal; nothing is committed", async () => {
    const { target, spec } = withSpec();
    const head = target.git("rev-parse", "HEAD").trim();
    target.setScript(
      plannerWrites({
        "packets/P02-triple.toml": packet("P02", "Add triple", spec, "triple"),
        "packets/supplied/P02/test/triple.test.js": DOUBLE_TEST_FOR("triple", 2, 6),
        "packets/P03-halve.toml": packet("P03", "Add halve", spec, "halve"),
        "packets/supplied/P03/test/halve.test.js": DOUBLE_TEST_FOR("halve", 8, 4),
        "packets/P04-add.toml": packet("P04", "Check add", spec, "add"),
        "packets/supplied/P04/test/add-again.test.js": ADD_TEST,
        "packets/P05-broken.toml": 'id = "P05"\ngoal = "Broken\n',
        "packets/P06-double.toml": packet("P06", "add  double", spec, "double2"),
      }),
    );
    const { code, out, stdout } = await cutIn(target);
    expect(code).toBe(1);
    expect(stdout).toMatch(/P02\s+Add triple\s+1 file not loading yet\s+accepted/);
    expect(stdout).toMatch(/P03\s+Add halve\s+1 file not loading yet\s+accepted/);
    expect(stdout).toMatch(/P04\s+Check add\s+-\s+refused/);
    expect(stdout).toContain("planted tests cannot tell right from wrong");
    expect(stdout).toContain("packets/P05-broken.toml:2: TOML syntax error");
    expect(stdout).toContain('goal "add  double" repeats packets/P01-double.toml');
    expect(out).toMatch(/cutting packets from docs\/SPEC\.md @ [0-9a-f]{10} \(tier advanced, agent \w+, model \S+\)/);

    // The accepted ones are in the checkout, untracked; nothing was committed or queued.
    expect(target.git("rev-parse", "HEAD").trim()).toBe(head);
    const status = target.git("status", "--porcelain", "--untracked-files=all").trim().split("\n").sort();
    expect(status).toEqual(["?? packets/P02-triple.toml", "?? packets/P03-halve.toml", "?? packets/supplied/P02/test/triple.test.js", "?? packets/supplied/P03/test/halve.test.js"]);
    expect(target.read("packets/supplied/P02/test/triple.test.js")).toBe(DOUBLE_TEST_FOR("triple", 2, 6));
    // The refused ones are kept with their reasons.
    const refused = refusedDir(target);
    expect(readFileSync(join(refused, "P04-add.toml.reasons.txt"), "utf8")).toContain("planted tests cannot tell right from wrong");
    expect(existsSync(join(refused, "packets/supplied/P04/test/add-again.test.js"))).toBe(true);
    expect(existsSync(join(refused, "packets/P05-broken.toml"))).toBe(true);
    // The planner's call is on record with its cost.
    expect((await target.events()).filter((event) => event.kind === "spent")).toEqual([expect.objectContaining({ for: expect.stringContaining("factory cut: the planner"), costUsd: 0.2 })]);
    // The planning spend is the night's, in the brief's total.
    const brief = bufferOutput();
    expect(await report({ cwd: target.dir, since: "2000-01-01", output: brief })).toBe(0);
    expect(brief.text()).toContain("Spend: $0.20; besides the packets: factory cut: the planner (tier advanced) on docs/SPEC.md $0.20");
  });

  it("refuses a planted file with a case that passes already, though another fails (a run would take it), and a spec_commit that is not the spec's last", async () => {
    const { target, spec } = withSpec();
    // It loads at the tip (the new module is imported inside the case): one case fails, the other passes.
    const mixed = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest("triples", async () => {\n  const { triple } = await import("../src/triple.js");\n  assert.equal(triple(2), 6);\n});\n\ntest("still adds", () => {\n  assert.equal(add(1, 1), 2);\n});\n`;
    target.setScript(
      plannerWrites({
        "packets/P02-triple.toml": packet("P02", "Add triple", spec, "triple"),
        "packets/supplied/P02/test/triple.test.js": mixed,
        "packets/P03-halve.toml": packet("P03", "Add halve", target.spec, "halve"),
        // A planted runner configuration could decide how its own planted tests are judged.
        "packets/P04-quarter.toml": packet("P04", "Add quarter", spec, "quarter").replace("[[invariants]]", 'support_files = ["test/conftest.py"]\n\n[[invariants]]'),
        "packets/supplied/P04/test/quarter.test.js": DOUBLE_TEST_FOR("quarter", 8, 2),
        "packets/supplied/P04/test/conftest.py": "",
        // A planted test that loads its support file as a plugin: runner steering by another door.
        "packets/P06-sixth.toml": packet("P06", "Add sixth", spec, "sixth").replace("[[invariants]]", 'support_files = ["test/helpers.py"]\n\n[[invariants]]'),
        "packets/supplied/P06/test/test_sixth.py": 'import pytest\n\npytest_plugins = ["test.helpers"]\n\n\ndef test_sixth():\n    assert False\n',
        "packets/supplied/P06/test/helpers.py": "",
      }),
    );
    const { code, stdout } = await cutIn(target);
    expect(code).toBe(1);
    expect(stdout).toMatch(/P02\s+Add triple\s+1 failing\s+refused/);
    expect(stdout).toContain("every planted case must fail at the tip before the work, and 1 of 2 in test/triple.test.js pass already");
    expect(stdout).toContain(`spec_commit is "${target.spec}", not the full sha of the spec's last commit (${spec})`);
    expect(stdout).toContain("planted file packets/supplied/P04/test/conftest.py edits test-runner configuration, which could decide how its own planted tests are judged");
    expect(stdout).toContain("planted file packets/supplied/P06/test/test_sixth.py:3 loads a pytest plugin by name (pytest_plugins), which could decide how its own planted tests are judged");
  });

  it("exits 0 when every proposal is accepted, and never writes over a file in the checkout", async () => {
    const { target, spec } = withSpec();
    target.setScript(plannerWrites({ "packets/P02-triple.toml": packet("P02", "Add triple", spec, "triple"), "packets/supplied/P02/test/triple.test.js": DOUBLE_TEST_FOR("triple", 2, 6) }));
    const accepted = await cutIn(target);
    expect([accepted.code, accepted.stdout]).toEqual([0, expect.stringMatching(/P02\s+Add triple\s+1 file not loading yet\s+accepted/)]);
    // Again, with the user's own (different) P02 file in the checkout: it stays as it is.
    writeFileSync(join(target.dir, "packets/P02-triple.toml"), "mine\n");
    const again = await cutIn(target);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("packets/P02-triple.toml exists in your checkout; nothing of yours is overwritten");
    expect(target.read("packets/P02-triple.toml")).toBe("mine\n");
  });

  it("says so when the planner proposes nothing (exit 1)", async () => {
    const { target } = withSpec();
    target.setScript({ cut: { planner: [{}] } });
    const { code, out } = await cutIn(target);
    expect(code).toBe(1);
    expect(out).toContain("The planner proposed no packet.");
    expect(out).toContain("the planner wrote no packet file under .factory/cut/packets/");
  });

  it("refuses bad input with exit 2 before any call: a spec not in git, an empty scope, an unreadable scope file, both scopes", async () => {
    const { target } = withSpec();
    target.write("docs/NEW.md", "# new\n");
    const cases = [
      [{ spec: "docs/NEW.md", scope: "all" }, "docs/NEW.md is not in git at the tip of main: commit the spec first"],
      [{ spec: "docs/GONE.md", scope: "all" }, "docs/GONE.md is not in git at the tip of main"],
      [{ scope: "  \n" }, "the scope is empty"],
      [{ scopeFile: "nope.txt" }, "nope.txt: cannot be read (ENOENT)"],
      [{ scope: "a", scopeFile: "nope.txt" }, "give --scope or --scope-file, not both"],
      [{}, "say what to cut"],
    ] as const;
    for (const [input, message] of cases) {
      const result = await cutIn(target, input);
      expect([result.code, result.out]).toEqual([2, expect.stringContaining(message)]);
    }
    expect(await target.events()).toEqual([]);
  });
});
