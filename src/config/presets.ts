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
  testRunner?: "vitest" | "jest" | "mocha" | "ava" | "node" | undefined;
  /** For vitest: its version, installed (node_modules) or else as the manifest asks for it (`^0.33.0`). */
  testRunnerVersion?: string;
  /** For jest: whether the project depends on jest-junit, the reporter that writes JUnit XML (jest has none built in). */
  jestJunit?: boolean;
  lockfile?: boolean;
  /** For node: the package manager its lock file names. */
  packageManager?: "npm" | "pnpm" | "yarn";
  /** For node:test, which needs paths: the test paths of its test script, or the test directory found. */
  testPaths?: string[];
  /** For python: ruff gates only when the project configures ruff or depends on it (else its existing findings would block every packet). */
  ruff?: boolean;
  /** For python: the install its lock or requirements file implies ("" when none is known). */
  install?: string;
  /** For python: the code is imported from `src/` and nothing installs the project or sets pytest's pythonpath. */
  srcLayout?: boolean;
}

export function renderSurface(surface: DetectedSurface): string {
  const key = `surfaces.${surface.name}`;
  // At the repository root, test discovery would also find the planted copies under packets/supplied/.
  const atRoot = surface.dir === ".";
  const lines = [`[${key}]`, `dir = "${surface.dir}"`];
  if (surface.kind === "python") {
    lines.push(`install = "${surface.install ?? ""}"${surface.install ? "" : '                     # e.g. "uv sync" or "pip install -e .[test]"'}   # run once per fresh worktree`);
    if (surface.ruff) {
      // {files}: only what the attempt changed, so the project's existing findings never block a packet.
      lines.push(
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
      );
    } else {
      lines.push(``, `  # No ruff gates: the project neither configures ruff nor depends on it.`);
    }
    // A src layout imports its package from src/: uv and poetry install the project itself; otherwise pytest needs the path.
    const importPath = surface.srcLayout && !/^(uv sync|poetry install)\b/.test(surface.install ?? "");
    lines.push(
      ``,
      ...(importPath ? [`  # src layout: the package is imported from src/ (or install the project, e.g. install = "python3 -m pip install -e .", and drop PYTHONPATH)`] : []),
      `  [[${key}.gates]]`,
      `  name = "pytest"`,
      `  run = "${importPath ? "PYTHONPATH=src " : ""}python3 -m pytest -q${atRoot ? " --ignore=packets" : ""} --junitxml={junit} {tests}"   # {junit}: per-test results, compared with the baseline; {tests}: the planted tests, when they run on their own`,
      `  tests = true`,
    );
    return lines.join("\n");
  }
  const scripts = surface.scripts ?? {};
  const manager = surface.packageManager ?? "npm";
  lines.push(`install = "${INSTALL[manager][surface.lockfile ? 0 : 1]}"`);
  for (const name of ["lint", "typecheck", "build"]) {
    if (scripts[name] === undefined) continue;
    lines.push(``, `  [[${key}.gates]]`, `  name = "${name}"`, `  run = "${manager} run ${name}"`);
  }
  const test = testGate(surface, atRoot);
  if (test) {
    const unexcluded = atRoot && surface.testRunner === "vitest" && !vitestHasExclude(surface.testRunnerVersion);
    lines.push(
      ``,
      ...(unexcluded
        ? [
            `  # vitest ${surface.testRunnerVersion} has no --exclude (vitest 1.0 added it). The factory's worktrees have no packets/ anyway;`,
            `  # to leave the planted copies out of your own runs, add "packets/**" to test.exclude in your vitest config.`,
          ]
        : []),
      `  [[${key}.gates]]`,
      `  name = "test"`,
      `  run = "${test}"`,
      `  tests = true`,
    );
  } else if (scripts.test !== undefined) {
    lines.push(
      ``,
      ...(surface.testRunner === "jest"
        ? [
            `  # jest writes no JUnit XML by itself: add jest-junit to devDependencies and run \`factory init\` again`,
            `  # (a tests gate compares results per test and checks the planted tests), or make it write to {junit} and set tests = true.`,
          ]
        : [`  # No JUnit reporter is known for this test runner, so results are not compared per test.`, `  # Make it write JUnit XML to {junit} and set tests = true.`]),
      `  [[${key}.gates]]`,
      `  name = "test"`,
      `  run = "npm test"`,
    );
  }
  return lines.join("\n");
}

/** Per package manager: the install with a lock file, and without one. */
const INSTALL = {
  npm: ["npm ci", "npm install"],
  pnpm: ["pnpm install --frozen-lockfile", "pnpm install"],
  yarn: ["yarn install --frozen-lockfile", "yarn install"],
} as const;
const EXEC = { npm: "npx", pnpm: "pnpm exec", yarn: "yarn" } as const;

/** The tests gate `factory init` writes for a node surface's test runner, when its results can be read per test. */
export function testGate(surface: DetectedSurface, atRoot: boolean): string | undefined {
  switch (surface.testRunner) {
    // vitest before 1.0 refuses an option it does not know: the whole gate would fail.
    case "vitest":
      return `${EXEC[surface.packageManager ?? "npm"]} vitest run${atRoot && vitestHasExclude(surface.testRunnerVersion) ? " --exclude 'packets/**'" : ""} --reporter=default --reporter=junit --outputFile.junit={junit} {tests}`;
    // node --test without paths would also collect the planted copies under packets/supplied/: name the test paths.
    case "node":
      return `node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination={junit} {tests|${nodeTestArguments(surface.testPaths ?? ["test/"])}}`;
    // jest-junit leaves a file that fails to load (or holds no test) out of its report unless told to report suite errors.
    // jest's --reporters takes every word after it: `--` ends it, and --runTestsByPath runs the named files, not every path they match.
    case "jest":
      return surface.jestJunit
        ? `JEST_JUNIT_OUTPUT_FILE={junit} JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true ${EXEC[surface.packageManager ?? "npm"]} jest --ci${atRoot ? " --testPathIgnorePatterns=/packets/" : ""} --reporters=default --reporters=jest-junit --runTestsByPath -- {tests}`
        : undefined;
    // mocha's xunit reporter is built in. In parallel mode each file loads in a worker, so a file that cannot load
    // is one failing entry named by its path and the rest run; serially, mocha stops at it and writes no report.
    case "mocha":
      return `${EXEC[surface.packageManager ?? "npm"]} mocha --parallel${atRoot ? " --ignore 'packets/**'" : ""} --reporter xunit --reporter-option output={junit} {tests}`;
    // ava writes TAP, not JUnit: {tap}. Its titles carry each file's name relative to the files a run has, so the
    // gate always runs the whole suite (no {tests}): a case keeps its name from run to run.
    case "ava":
      return `${EXEC[surface.packageManager ?? "npm"]} ava --tap > {tap}`;
    case undefined:
      return undefined;
  }
}

/**
 * Pure: test paths as `node --test` takes them on Node 20, 22 and 24 alike: a file or glob as written, a
 * directory as the files under it, listed by the shell (`node --test test/` runs the directory as a module on
 * Node 22 and 24; on 20 it searched it, and 20 does not expand a glob it is given).
 */
export function nodeTestArguments(paths: readonly string[]): string {
  return paths.map((path) => (isDirectoryPath(path) ? `$(find ${path.replace(/\/+$/, "") || "."} -type f -name '*.*js' | sort)` : path)).join(" ");
}

/** A path written as a directory: a trailing slash, or a last segment with no extension and no glob. */
function isDirectoryPath(path: string): boolean {
  const last = path.replace(/\/+$/, "").split("/").at(-1) ?? "";
  return path.endsWith("/") || (!last.includes(".") && !/[*?[{]/.test(last));
}

/** Pure: whether a vitest version (or the range a manifest asks for) knows `--exclude`, new in 1.0; unknown versions are taken as current. */
export function vitestHasExclude(version: string | undefined): boolean {
  const major = /(\d+)\.\d+/.exec(version ?? "")?.[1] ?? /^\D*(\d+)/.exec(version ?? "")?.[1];
  return major === undefined || Number(major) >= 1;
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
# Reference: docs/reference/configuration.md. \`factory lint\` checks this file.

# The branch merged work lands on.
target_branch = "${input.targetBranch}"

# ── Surfaces: parts of the repository with their own toolchain and gates. ──
# Gates run in the packet's worktree, in order, all of them. A tests = true gate
# writes JUnit XML to {junit} (or TAP to {tap}); results are compared with the baseline per test.
${surfaces}

# ── Agents: adapter instances. kind = claude | codex | gemini | command ──
[agents.claude]
kind = "claude"
bin = "claude"

# [agents.codex]
# kind = "codex"
# bin = "codex"
# prices = { "gpt-5-codex" = { input = 1.25, output = 10.0, cached_input = 0.125 } }  # USD per million tokens: Codex reports tokens, not money

# [agents.gemini]
# kind = "gemini"
# bin = "gemini"

# [agents.mine]                  # any program: the prompt on stdin, FACTORY_* variables (docs/reference/command-agent-protocol.md)
# kind = "command"
# run = "node agent.mjs"

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

[planning]
# require_assessment = "all"   # run refuses packets without a ready ruling from \`factory assess\`
mutants = 20                   # after a landing: mutants of its changed lines against its planted tests (0: off)
mutants_share = 0.4            # the mutation check runs at most this share of the run's own time (0: no bound)

[notify]
command = ""                   # run on awaiting_human / blocked / run end, JSON summary on stdin
# webhook = "https://hooks.slack.com/services/…"   # the same events, POSTed as JSON (Slack-compatible text)
# desktop = true               # a desktop notification too, where notify-send and a session bus exist (the default)
`;
}
