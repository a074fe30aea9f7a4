import { execFileSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { run } from "../../src/commands/run.js";
import type { LedgerEvent } from "../../src/ledger/events.js";
import { foldLedger, type PacketRecord } from "../../src/ledger/fold.js";
import { readLedger } from "../../src/ledger/store.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, removedAfterEach, type TestRepo } from "./git-repo.js";

export const SCRIPTED_AGENT = fileURLToPath(new URL("../../sample/agent/scripted-agent.mjs", import.meta.url));
/** A one-process pass/fail test runner for the target repositories (see the file). */
/** node:test over a directory of tests, on every Node version this project supports. */
export const JUNIT_RUNNER = fileURLToPath(new URL("./junit-runner.mjs", import.meta.url));

export const DOUBLE_JS = "export function double(n) {\n  return n * 2;\n}\n";
export const DOUBLE_TEST = `import assert from "node:assert/strict";
import test from "node:test";
import { double } from "../src/double.js";

test("doubles", () => {
  assert.equal(double(21), 42);
});
`;

/** What an honest implementer and reviewer of P01 write, for the real-CLI tests' scripted servers. */
export const HONEST_RESULT = { packet: "P01", status: "complete", summary: "Added double.", verification: { tests: "passed" } };
export const HONEST_REVIEW = { packet: "P01", verdict: "accept", invariants: [{ id: "doubles", status: "held", evidence: "src/double.js:2" }], findings: [] };

/** A planted node:test file for `src/<name>.js`, asserting `name(input) === output`. */
export const DOUBLE_TEST_FOR = (name: string, input: number, output: number): string =>
  `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { ${name} } from "../src/${name}.js";\n\ntest("${name}s", () => {\n  assert.equal(${name}(${input}), ${output});\n});\n`;

/** A scripted agent's steps per packet (and under "cut", the planner's; see sample/agent/scripted-agent.mjs). */
export type Script = Record<string, { implementer?: object[]; reviewer?: object[]; assessor?: object[]; planner?: object[] }>;

export interface LoopRepo extends TestRepo {
  spec: string;
  scriptFile: string;
  setScript(script: Script): void;
  run(options?: {
    once?: boolean;
    packet?: string;
    maxCost?: number;
    concurrency?: number;
    keepGoing?: boolean;
    json?: boolean;
    signal?: AbortSignal;
  }): Promise<{ code: number; out: string; stdout: string[] }>;
  events(packet?: string): Promise<LedgerEvent[]>;
  record(packet: string): Promise<PacketRecord | undefined>;
  subjects(): string[];
  targetTestsPass(): boolean;
}

export interface LoopRepoOptions {
  script: Script;
  /** Extra TOML lines for packet P01. */
  packet?: string;
  allowed?: string[];
  forbidden?: string[];
  /** Replaces the planted test of P01; null for none. */
  planted?: string | null;
  /** Extra config (appended). */
  config?: string;
  idleTimeout?: string;
  /** Replaces the [agents] and [tiers] tables (default: the scripted command agent). */
  agents?: string;
  gates?: string;
}

/**
 * A test config's extra lines with the mutation check off, unless they set [planning] themselves: it runs the
 * planted tests once per mutant after every landing, and has its own tests (mutants.test.ts).
 */
export function withoutMutants(config: string): string {
  return config.includes("[planning]") ? config : `${config}\n[planning]\nmutants = 0\n`;
}

/** The syntax gate and a tests gate running `tests`. */
export const gatesRunning = (tests: string): string => `
  [[surfaces.app.gates]]
  name = "syntax"
  run = "for f in {files}; do node --check \\"$f\\" || exit 1; done"
  files = "**/*.js"

  [[surfaces.app.gates]]
  name = "test"
  run = "${tests}"
  tests = true
`;

export const DEFAULT_GATES = gatesRunning(`node --test-reporter=junit --test-reporter-destination={junit} '${JUNIT_RUNNER}' test/`);

/** The same gates on the real `node --test`: for the tests about what node:test itself does. */
export const NODE_TEST_GATES = gatesRunning("node --test --test-reporter=junit --test-reporter-destination={junit} $(find test -type f -name '*.*js' | sort)");

/**
 * A throwaway target repository with a tiny node project, a scripted agent
 * and one packet P01 ("add src/double.js", planted test/double.test.js).
 */
export function makeLoopRepo(options: LoopRepoOptions): LoopRepo {
  const repo = makeRepo({ initialCommit: false });
  // In the repository's git directory: readable inside the sandbox, where the machine's /tmp is not.
  const scriptFile = join(repo.dir, ".git", "factory-test-script.json");
  repo.write("docs/SPEC.md", "# spec\n\nDouble things.\n");
  repo.write("src/calc.js", "export function add(a, b) {\n  return a + b;\n}\n");
  repo.write(
    "test/calc.test.js",
    `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest("adds", () => {\n  assert.equal(add(2, 2), 4);\n});\n`,
  );
  repo.write("package.json", JSON.stringify({ name: "target", private: true, type: "module" }));
  repo.write(".gitignore", ".factory/state/\n.factory/worktrees/\n.factory/runs/\n");
  repo.write(
    ".factory/config.toml",
    `target_branch = "main"

[surfaces.app]
dir = "."
${options.gates ?? DEFAULT_GATES}
${
  options.agents ??
  `[agents.scripted]
kind = "command"
run = "node ${SCRIPTED_AGENT} ${scriptFile}"

[tiers]
basic = { agent = "scripted", model = "m-basic" }
standard = { agent = "scripted", model = "m-standard" }
advanced = { agent = "scripted", model = "m-advanced" }`
}

[limits]
agent_timeout = "60s"
agent_idle_timeout = "${options.idleTimeout ?? "30s"}"
gate_timeout = "60s"
max_attempts = 2
${withoutMutants(options.config ?? "")}`,
  );
  const spec = repo.commit("project and spec");
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"
goal = "Add double"
spec_commit = "${spec}"
spec_path = "docs/SPEC.md"
allowed_paths = ${JSON.stringify(options.allowed ?? ["src/double.js"])}
forbidden_paths = ${JSON.stringify(options.forbidden ?? ["src/calc.js"])}
${options.packet ?? ""}
brief = '''
Add src/double.js exporting double(n), which returns n * 2.
'''

[[invariants]]
id = "doubles"
assert = "double(n) is n * 2"
`,
  );
  if (options.planted !== null) repo.write("packets/supplied/P01/test/double.test.js", options.planted ?? DOUBLE_TEST);
  repo.commit("queue");
  writeFileSync(scriptFile, JSON.stringify(options.script));

  return {
    ...repo,
    spec,
    scriptFile,
    cleanup() {
      repo.cleanup();
      execFileSync("rm", ["-f", scriptFile]);
    },
    setScript: (script) => writeFileSync(scriptFile, JSON.stringify(script)),
    async run(runOptions = {}) {
      const output = bufferOutput();
      const code = await run({
        cwd: repo.dir,
        once: runOptions.once ?? false,
        packet: runOptions.packet,
        maxCost: runOptions.maxCost,
        concurrency: runOptions.concurrency,
        output,
        signal: runOptions.signal ?? new AbortController().signal,
        ...(runOptions.keepGoing ? { keepGoing: true } : {}),
        ...(runOptions.json ? { json: true } : {}),
      });
      return { code, out: output.text(), stdout: output.stdout };
    },
    async events(packet) {
      const { events } = await readLedger(repo.dir);
      return packet ? events.filter((event) => "packet" in event && event.packet === packet) : events;
    },
    async record(packet) {
      return foldLedger((await readLedger(repo.dir)).events).packets.get(packet);
    },
    subjects: () => repo.git("log", "--format=%s", "main").trim().split("\n"),
    targetTestsPass: () => {
      try {
        execFileSync(process.execPath, ["--test", ...testFilesOf(repo.dir)], { cwd: repo.dir, stdio: "pipe" });
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** P01 merged on its first attempt with exactly DOUBLE_JS, every factory gate and the tests passing. */
export async function expectMergedHonestly(target: LoopRepo, run: { code: number; out: string }): Promise<void> {
  expect(run.out).toContain("P01#1 → merged");
  expect(run.code).toBe(0);
  expect(target.read("src/double.js")).toBe(DOUBLE_JS);
  expect(gateResults(await target.events("P01"), 1)).toMatchObject({ untouched: "pass", scope: "pass", tamper: "pass", test: "pass" });
}

export function gateResults(events: readonly LedgerEvent[], attempt: number): Record<string, string> {
  const results: Record<string, string> = {};
  for (const event of events) if (event.kind === "gate-finished" && event.attempt === attempt) results[event.gate] = event.result;
  return results;
}

/** Loop repositories for a test, every one removed after it: `const setUp = useLoopRepos(afterEach)`. */
export function useLoopRepos(afterEach: (hook: () => void) => void): (options: LoopRepoOptions) => LoopRepo {
  return removedAfterEach(afterEach, makeLoopRepo);
}

/** The test files of a checkout's test/ directory, by name: `node --test test/` runs the directory as a module on Node 22 and 24. */
export function testFilesOf(dir: string): string[] {
  return readdirSync(join(dir, "test"), { recursive: true, encoding: "utf8" })
    .filter((name) => /\.[cm]?js$/.test(name))
    .map((name) => join("test", name))
    .sort();
}
