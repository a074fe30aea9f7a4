/**
 * Surface presets for `factory init`, detected from manifests. Pure: takes
 * what was found on disk, returns TOML text with comments for a person to edit.
 */
export interface DetectedSurface {
  name: string;
  dir: string;
  kind: "python" | "node";
  /** For node: the package.json scripts, and which test runner its dependencies name. */
  scripts?: Record<string, string>;
  testRunner?: "vitest" | "jest" | "node" | undefined;
  lockfile?: boolean;
}

export function renderSurface(surface: DetectedSurface): string {
  const key = `surfaces.${surface.name}`;
  // At the repository root, test discovery would also find the planted copies under packets/supplied/.
  const atRoot = surface.dir === ".";
  const lines = [`[${key}]`, `dir = "${surface.dir}"`];
  if (surface.kind === "python") {
    lines.push(
      `install = ""                     # e.g. "uv sync" or "pip install -e .[test]"; run once per fresh worktree`,
      ``,
      `  [[${key}.gates]]`,
      `  name = "ruff-format"`,
      `  run = "ruff format --check {files}"   # {files}: this surface's changed files matching \`files\``,
      `  files = "**/*.py"`,
      `  fix = "ruff format {files}"            # auto-repair, committed on its own; spends no attempt`,
      ``,
      `  [[${key}.gates]]`,
      `  name = "ruff"`,
      `  run = "ruff check {files}"`,
      `  files = "**/*.py"`,
      ``,
      `  [[${key}.gates]]`,
      `  name = "pytest"`,
      `  run = "python3 -m pytest -q${atRoot ? " --ignore=packets" : ""} --junitxml={junit} {tests}"   # {junit}: per-test results, compared with the baseline; {tests}: the planted tests, when they run on their own`,
      `  tests = true`,
    );
    return lines.join("\n");
  }
  const scripts = surface.scripts ?? {};
  lines.push(`install = "${surface.lockfile ? "npm ci" : "npm install"}"`);
  for (const name of ["lint", "typecheck", "build"]) {
    if (scripts[name] === undefined) continue;
    lines.push(``, `  [[${key}.gates]]`, `  name = "${name}"`, `  run = "npm run ${name}"`);
  }
  const test = testGate(surface.testRunner, atRoot);
  if (test) {
    lines.push(``, `  [[${key}.gates]]`, `  name = "test"`, `  run = "${test}"`, `  tests = true`);
  } else if (scripts.test !== undefined) {
    lines.push(
      ``,
      `  # No JUnit reporter is known for this test runner, so results are not compared per test.`,
      `  # Make it write JUnit XML to {junit} and set tests = true.`,
      `  [[${key}.gates]]`,
      `  name = "test"`,
      `  run = "npm test"`,
    );
  }
  return lines.join("\n");
}

function testGate(runner: DetectedSurface["testRunner"], atRoot: boolean): string | undefined {
  switch (runner) {
    case "vitest": return `npx vitest run${atRoot ? " --exclude 'packets/**'" : ""} --reporter=default --reporter=junit --outputFile.junit={junit} {tests}`;
    case "node": return "node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination={junit} {tests}";
    case "jest": return undefined;
    case undefined: return undefined;
  }
}

export function renderConfig(input: { targetBranch: string; surfaces: DetectedSurface[] }): string {
  const surfaces = input.surfaces.length
    ? input.surfaces.map(renderSurface).join("\n\n")
    : [
        `# No pyproject.toml, setup.cfg or package.json was found. Declare a surface per toolchain:`,
        `# [surfaces.app]`,
        `# dir = "."`,
        `#   [[surfaces.app.gates]]`,
        `#   name = "test"`,
        `#   run = "make test"`,
      ].join("\n");
  return `# factory configuration: surfaces, gates, agents, limits.
# Reference: the README ("Configuration"). \`factory lint\` checks this file.

# The branch merged work lands on.
target_branch = "${input.targetBranch}"

# ── Surfaces: parts of the repository with their own toolchain and gates. ──
# Gates run in the packet's worktree, in order, all of them. A tests = true gate
# writes JUnit XML to {junit}; results are compared with the baseline per test.
${surfaces}

# ── Agents: adapter instances. kind = claude | codex | gemini | command ──
[agents.claude]
kind = "claude"
bin = "claude"

# Tiers map a packet's tier to an agent and model, weakest first.
# A packet's reviewer is one tier up unless it says otherwise.
[tiers]
basic = { agent = "claude", model = "haiku" }
standard = { agent = "claude", model = "sonnet" }
advanced = { agent = "claude", model = "opus" }

[limits]
agent_timeout = "60m"
gate_timeout = "15m"
max_attempts = 3
concurrency = 1
# max_cost_usd = 25            # per \`factory run\`; checked before every claim and agent call

[merge]
message = "feat: {goal} [{id}]"

[notify]
command = ""                   # run on awaiting_human / blocked / run end, JSON summary on stdin
`;
}
