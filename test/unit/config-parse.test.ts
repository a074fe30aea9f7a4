import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import { nodeTestArguments, renderConfig } from "../../src/config/presets.js";
import { MINIMAL_CONFIG } from "../helpers/packets.js";

describe("parseConfig", () => {
  it("fills every default", () => {
    const result = parseConfig(MINIMAL_CONFIG);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.targetBranch).toBe("main");
    expect(result.config.surfaces).toEqual([{ name: "api", dir: "api", install: undefined, gates: [], network: false }]);
    expect(result.config.sandbox).toEqual({ kind: "bwrap", home: [] });
    expect(result.config.tiers.map((t) => t.name)).toEqual(["basic", "standard", "advanced"]);
    expect(result.config.limits).toMatchObject({ maxAttempts: 3, concurrency: 1, agentTimeoutMs: 3_600_000, gateTimeoutMs: 900_000 });
    expect(result.config.merge.message).toBe("feat: {goal} [{id}]");
    expect(result.config.merge.batch).toBe(4);
    expect(result.config.notify.command).toBeUndefined();
  });

  it("names the agent a tier probably meant when it names an unknown one", () => {
    const typo = parseConfig(MINIMAL_CONFIG.replace('standard = { agent = "scripted"', 'standard = { agent = "scriptd"'));
    expect(typo.ok ? [] : typo.problems.map((problem) => problem.message)).toEqual(['unknown agent "scriptd" (did you mean "scripted"?); [agents] has scripted']);
    const far = parseConfig(MINIMAL_CONFIG.replace('standard = { agent = "scripted"', 'standard = { agent = "gemini"'));
    expect(far.ok ? [] : far.problems.map((problem) => problem.message)).toEqual(['unknown agent "gemini"; [agents] has scripted']);
  });

  it("reads the sandbox, and refuses an unknown kind or a HOME path that leaves HOME", () => {
    const none = parseConfig(`${MINIMAL_CONFIG}\n[sandbox]\nkind = "none"\nhome = [".rustup"]\n`);
    expect(none.ok && none.config.sandbox).toEqual({ kind: "none", home: [".rustup"] });
    const bad = parseConfig(`${MINIMAL_CONFIG}\n[sandbox]\nkind = "docker"\nhome = ["../etc"]\n`);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('unknown sandbox kind "docker"'), expect.stringContaining('"../etc" must be a path inside HOME')]);
  });

  it("reads [planning], and refuses an unknown policy, an unknown tier and a negative cap", () => {
    const fallback = parseConfig(MINIMAL_CONFIG);
    expect(fallback.ok && fallback.config.planning).toEqual({ tier: undefined, requireAssessment: "none", maxCostUsd: undefined, mutants: 20, mutantsShare: 0.4 });
    const set = parseConfig(`${MINIMAL_CONFIG}\n[planning]\ntier = "standard"\nrequire_assessment = "advanced"\nmax_cost_usd = 2.5\nmutants = 0\nmutants_share = 0.25\n`);
    expect(set.ok && set.config.planning).toEqual({ tier: "standard", requireAssessment: "advanced", maxCostUsd: 2.5, mutants: 0, mutantsShare: 0.25 });
    const bad = parseConfig(`${MINIMAL_CONFIG}\n[planning]\ntier = "huge"\nrequire_assessment = "some"\nmax_cost_usd = -1\n`);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('unknown tier "huge"'),
      expect.stringContaining('"some" is not a choice; use "none"'),
      "must be at least 0, not -1",
    ]);
  });

  it("reads how long run directories are kept (14 days unless [retention] runs says), and refuses what is not a duration", () => {
    const kept = parseConfig(`${MINIMAL_CONFIG}\n[retention]\nruns = "3d12h"\n`);
    expect(kept.ok && kept.config.retention.runsMs).toBe(3.5 * 86_400_000);
    const fallback = parseConfig(MINIMAL_CONFIG);
    expect(fallback.ok && fallback.config.retention.runsMs).toBe(14 * 86_400_000);
    const bad = parseConfig(`${MINIMAL_CONFIG}\n[retention]\nruns = "two weeks"\nlogs = "1d"\n`);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('"two weeks" is not a duration; write e.g. "14d"'), expect.stringContaining("unknown key")]);
  });

  it("reads where notifications go (a webhook, a timeout of 10 s unless said, the desktop), and refuses a URL that is not http(s) and a timeout that is not a duration", () => {
    const set = parseConfig(`${MINIMAL_CONFIG}\n[notify]\nwebhook = "https://hooks.example/x"\ntimeout = "30s"\ndesktop = false\n`);
    expect(set.ok && set.config.notify).toEqual({ command: undefined, webhook: "https://hooks.example/x", timeoutMs: 30_000, desktop: false });
    const fallback = parseConfig(MINIMAL_CONFIG);
    expect(fallback.ok && fallback.config.notify).toEqual({ command: undefined, webhook: undefined, timeoutMs: 10_000, desktop: true });
    const bad = parseConfig(`${MINIMAL_CONFIG}\n[notify]\nwebhook = "hooks.example/x"\ntimeout = "soon"\n`);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('"hooks.example/x" is not an http(s) URL'), expect.stringContaining('"soon" is not a duration')]);
  });

  it("reads where a retry starts, and refuses what is not a choice", () => {
    const fresh = parseConfig(`${MINIMAL_CONFIG}\n[limits]\nretry_from = "tip"\non_block = "continue"\n`);
    expect(fresh.ok && [fresh.config.limits.retryFrom, fresh.config.limits.onBlock]).toEqual(["tip", "continue"]);
    const bad = parseConfig(`${MINIMAL_CONFIG}\n[limits]\nretry_from = "first"\non_block = "skip"\n`);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('"first" is not a choice; use "last"'), expect.stringContaining('"skip" is not a choice')]);
  });

  it("reads gates, limits and durations", () => {
    const result = parseConfig(`${MINIMAL_CONFIG}
[surfaces.web]
dir = "web/"
install = "npm ci"
network = true
  [[surfaces.web.gates]]
  name = "lint"
  run = "npm run lint -- {files}"
  files = "**/*.ts"
  fix = "npm run lint -- --fix {files}"
  timeout = "90s"
  [[surfaces.web.gates]]
  name = "test"
  run = "vitest run --outputFile={junit}"
  tests = true
[limits]
agent_timeout = "1h30m"
gate_timeout = 120
max_cost_usd = 25
max_attempts = 4
concurrency = 2
`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.surfaces[1]).toEqual({
      name: "web",
      dir: "web",
      install: "npm ci",
      network: true,
      gates: [
        { name: "lint", run: "npm run lint -- {files}", files: "**/*.ts", fix: "npm run lint -- --fix {files}", tests: false, timeoutMs: 90_000 },
        { name: "test", run: "vitest run --outputFile={junit}", files: undefined, fix: undefined, tests: true, timeoutMs: undefined },
      ],
    });
    expect(result.config.limits).toMatchObject({ agentTimeoutMs: 5_400_000, gateTimeoutMs: 120_000, maxCostUsd: 25, maxAttempts: 4, concurrency: 2 });
  });

  it("reports every problem at once, with line and key", () => {
    const result = parseConfig(`target_brnach = "main"
[surfaces.api]
dir = "../outside"
  [[surfaces.api.gates]]
  name = "pytest"
  run = "pytest -q"
  tests = true
  [[surfaces.api.gates]]
  run = "ruff check"
[agents.a]
kind = "cursor"
[agents.b]
kind = "command"
[tiers]
basic = { agent = "nobody", model = "m" }
[limits]
gate_timeout = "soon"
max_attempts = 0
[merge]
message = "feat: {title}"
batch = 0
`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => `${p.line} ${p.key}`)).toEqual([
      "1 target_brnach",
      "3 surfaces.api.dir",
      "6 surfaces.api.gates[0].run",
      "8 surfaces.api.gates[1].name",
      "11 agents.a.kind",
      "12 agents.b.run",
      "15 tiers.basic.agent",
      "17 limits.gate_timeout",
      "18 limits.max_attempts",
      "20 merge.message",
      "21 merge.batch",
    ]);
    expect(result.problems.find((p) => p.key === "target_brnach")?.message).toContain('did you mean "target_branch"');
    expect(result.problems.find((p) => p.key === "surfaces.api.gates[0].run")?.message).toContain("{junit}");
  });

  it("takes a tests gate that writes TAP to {tap} (ava) as it takes one writing JUnit to {junit}; one writing neither is refused, naming both", () => {
    const config = (run: string) => `target_branch = "main"\n[surfaces.app]\ndir = "."\n[[surfaces.app.gates]]\nname = "test"\nrun = "${run}"\ntests = true\n`;
    expect(parseConfig(config("npx ava --tap > {tap}")).ok).toBe(true);
    const neither = parseConfig(config("npx ava --tap"));
    expect(neither.ok ? "" : neither.problems.find((p) => p.key === "surfaces.app.gates[0].run")?.message).toBe(
      "a tests = true gate must write JUnit XML to {junit} (or TAP to {tap}) so the factory can compare per-test results",
    );
  });

  it("reports a syntax error with its line", () => {
    const result = parseConfig(`[limits]\nmax_attempts = = 3\n`);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]?.line).toBe(2);
  });

  it("accepts what `factory init` writes, with and without surfaces", () => {
    for (const surfaces of [
      [],
      [
        { name: "api", dir: "api", kind: "python" as const },
        { name: "web", dir: "web", kind: "node" as const, scripts: { lint: "x", test: "vitest" }, testRunner: "vitest" as const },
      ],
    ]) {
      const result = parseConfig(renderConfig({ targetBranch: "trunk", surfaces }));
      expect(result.ok ? [] : result.problems).toEqual([]);
      expect(result.ok && result.config.targetBranch).toBe("trunk");
    }
  });
});

describe("node:test's paths in the gate factory init writes", () => {
  it("name a directory's files through the shell (Node 22 and 24 run `node --test test/` as a module), files and globs as written", () => {
    expect(nodeTestArguments(["test/"])).toBe("$(find test -type f -name '*.*js' | sort)");
    expect(nodeTestArguments(["spec", "test/unit/"])).toBe("$(find spec -type f -name '*.*js' | sort) $(find test/unit -type f -name '*.*js' | sort)");
    expect(nodeTestArguments(["test/a.test.js", "test/**/*.test.mjs"])).toBe("test/a.test.js test/**/*.test.mjs");
  });
});

describe("a mistyped agent kind", () => {
  it("names the kind probably meant (issue 57 §5)", () => {
    const parsed = parseConfig('[agents.claude]\nkind = "claud"\n');
    expect(parsed.ok ? [] : parsed.problems.map((problem) => problem.message)).toContain('unknown agent kind "claud" (did you mean "claude"?); use one of claude, codex, gemini, command');
  });
});
