import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundledTemplate } from "../../src/agents/prompt-templates.js";
import { doctor } from "../../src/commands/doctor.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/** Before anything is claimed or spent: what `run` checks, and `doctor` prints. */
const setUp = useLoopRepos(afterEach);
const honest = { write: { "src/double.js": DOUBLE_JS } };

describe("preflight", () => {
  it("refuses a run whose surface dir does not exist at the tip, naming the config line; nothing is claimed", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."', 'dir = "app"'));
    target.commit("a surface dir that is not there");
    const { code, out } = await target.run();
    expect(out).toContain('.factory/config.toml:4: surfaces.app.dir: "app" is not a directory of the repository at the tip');
    expect(out).toContain("factory run: nothing was run; fix the problems above (`factory lint` lists them).");
    expect(code).toBe(2);
    expect(await target.events()).toEqual([]);
  });

  it("refuses a run whose gate program is not on PATH, naming the config key; nothing is claimed", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('run = "node --test', 'run = "no-such-runner --test'));
    target.commit("a gate program that is not installed");
    const { code, out } = await target.run();
    expect(out).toContain('factory run refused: surface "app": gate "test" runs "no-such-runner", which is not on PATH');
    expect(code).toBe(2);
    expect(await target.events()).toEqual([]);
  });

  it("refuses a run whose packet pins a spec that does not resolve, naming the packet file", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace('spec_path = "docs/SPEC.md"', 'spec_path = "docs/NO-SUCH-SPEC.md"'));
    target.commit("a spec path that does not exist");
    const refused = await target.run();
    expect(refused.out).toMatch(/factory run refused: packets\/P01-double\.toml: spec_path docs\/NO-SUCH-SPEC\.md does not exist at spec_commit [0-9a-f]{10}; fix spec_path or spec_commit/);
    expect(refused.code).toBe(2);
    expect(await target.events()).toEqual([]);
    target.write("packets/P01-double.toml", target.read("packets/P01-double.toml").replace(/spec_commit = "[0-9a-f]+"/, 'spec_commit = "0123456789abcdef0123456789abcdef01234567"'));
    target.commit("a spec commit that does not exist");
    expect((await target.run()).out).toMatch(/factory run refused: packets\/P01-double\.toml: spec_commit 0123456789abcdef0123456789abcdef01234567 is not a commit in this repository/);
  });

  it("refuses a run whose agent CLI is found but does not start (--version fails)", async () => {
    const bin = join(tmpdir(), `factory-broken-claude-${process.pid}`);
    writeFileSync(bin, "#!/bin/sh\necho 'Error: Cannot find module' >&2\nexit 1\n");
    chmodSync(bin, 0o755);
    try {
      const tiers = ["basic", "standard", "advanced"].map((tier) => `${tier} = { agent = "cc", model = "m" }`).join("\n");
      const target = setUp({ agents: `[agents.cc]\nkind = "claude"\nbin = "${bin}"\n\n[tiers]\n${tiers}`, script: {} });
      const { code, out } = await target.run();
      expect(out).toContain(`factory run refused: agent "cc": \`${bin} --version\` did not answer, so the CLI does not start here`);
      expect(code).toBe(2);
      expect(await target.events()).toEqual([]);
    } finally {
      rmSync(bin, { force: true });
    }
  });

  it("doctor prints every check, ok on a sound setup and FAIL with the fix on a broken one", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const sound = bufferOutput();
    expect(await doctor({ cwd: target.dir, models: false, guards: false, reviewer: false, output: sound, signal: new AbortController().signal })).toBe(0);
    expect(sound.text()).toMatch(/ok {4}sandbox \(bubblewrap\) starts/);
    expect(sound.text()).toMatch(/ok {4}surface "app": gate "test" program "node" is on PATH/);
    expect(sound.text()).toMatch(/ok {4}packet P01: spec_commit and spec_path resolve/);
    expect(sound.text()).toMatch(/ok {4}surface "app": the gates run at the tip \(the tests gates. suite, and every whole-tree gate green\) \(1 test cases\)/);
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('run = "node --test', 'run = "no-such-runner --test'));
    target.commit("a broken config");
    const broken = bufferOutput();
    expect(await doctor({ cwd: target.dir, models: false, guards: false, reviewer: false, output: broken, signal: new AbortController().signal })).toBe(1);
    expect(broken.text()).toMatch(/FAIL {2}surface "app": gate "test" program "no-such-runner" is on PATH\n {6}surface "app": gate "test" runs "no-such-runner", which is not on PATH/);
  });

  it("a project's prompt templates replace the bundled ones; one that drops what the agent needs is refused before anything is claimed", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write(".factory/prompts/implementer.md", `House rules first: small commits.\n\n${bundledTemplate("implementer")}`);
    target.write(".factory/prompts/reviewer.md", "Review {{id}} and write {{result_contract}}\n");
    target.commit("our prompts");
    const refused = await target.run();
    expect(refused.code).toBe(2);
    expect(refused.out).toContain("factory run refused: .factory/prompts/reviewer.md: {{result_contract}} is not a placeholder the factory fills");
    expect(refused.out).toContain("{{review_contract}} is missing; the agent needs it");
    expect(await target.events()).toEqual([]);
    target.git("rm", "-q", ".factory/prompts/reviewer.md");
    target.commit("the bundled reviewer prompt");
    const { code } = await target.run();
    expect(code).toBe(0);
    const prompt = target.read(".factory/runs/P01/attempt-1/implementer-prompt.md");
    expect(prompt.startsWith("House rules first: small commits.\n\n# Task P01: Add double")).toBe(true);
    expect(prompt).toContain("Write this JSON to `.factory/result.json`");
  });

  it("a whole-tree gate (a lint of everything) already red at the tip refuses the run before anything is claimed; green there, the packet merges", async () => {
    const lint = '\n  [[surfaces.app.gates]]\n  name = "lint"\n  run = "! grep -rn TODO src"\n';
    const red = setUp({ script: { P01: { implementer: [honest] } } });
    red.write(".factory/config.toml", red.read(".factory/config.toml").replace("tests = true\n", `tests = true\n${lint}`));
    red.write("src/calc.js", `${red.read("src/calc.js")}// TODO: 17 errors\n`);
    red.commit("a lint gate, red at the tip");
    const refused = await red.run();
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(
      /factory run refused: surface "app": the baseline at [0-9a-f]{10} fails: gate "lint" is red at the tip [0-9a-f]{10} before any work \(failed \(exit 1\)\): fix the tip, drop the gate, or queue a packet that repairs it \(repairs = \["lint"\]\)/,
    );
    expect(refused.out).toContain("src/calc.js:4:// TODO: 17 errors");
    expect(await red.events()).toEqual([]);

    red.write("src/calc.js", red.read("src/calc.js").replace("// TODO: 17 errors\n", ""));
    red.commit("the tip made green");
    const { code, out } = await red.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });
});
