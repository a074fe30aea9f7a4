import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { status } from "../../src/commands/status.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { PYTEST_GATE, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Flaky tests told from regressions (issue 40 §2), through real pytest. A test's outcome is scripted by a
 * counter outside the repository (the sandbox is off so every checkout shares it): run n of the test
 * fails when n is in its schedule. The runs of tests/test_net.py::test_timeout in a packet, in order:
 * the baseline (0), the candidate's suite (1), its two reruns in the candidate (2, 3), two reruns on the
 * untouched tip (4, 5), and two more there (6, 7) when it failed only now and then in the candidate.
 */
const available = pytestAvailable("the flaky-test runs");
const queue = usePythonQueue(afterEach);
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const DOUBLE_PY = "def double(n):\n    return n * 2\n";
const HONEST = { P01: { implementer: [{ write: { "pkg/double.py": DOUBLE_PY } }], reviewer: [{ evidence: "pkg/double.py:1" }] } };

/** A test that fails on the runs its schedule names, counting its runs in `counter`. */
function scheduled(name: string, counter: string, failing: readonly number[], body = "pass"): string {
  return [
    "import os",
    "",
    "",
    `def ${name}():`,
    `    path = ${JSON.stringify(counter)}`,
    "    n = int(open(path).read()) if os.path.exists(path) else 0",
    "    open(path, 'w').write(str(n + 1))",
    `    assert n not in ${JSON.stringify(failing)}, f"run {n} fails by chance"`,
    `    ${body}`,
    "",
  ].join("\n");
}

function target(options: { failing: readonly number[]; planted?: string; gate?: string; config?: string }): { repo: TestRepo; counter: string } {
  const dir = mkdtempSync(join(tmpdir(), "factory-flaky-"));
  made.push(dir);
  const counter = join(dir, "runs");
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, {
    gate: options.gate ?? `${PYTEST_GATE} {tests}`,
    config: `${queue.agentConfig}[sandbox]\nkind = "none"\n[limits]\nmax_attempts = 1\n${options.config ?? ""}`,
    tests: {
      "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
      "tests/test_net.py": scheduled("test_timeout", counter, options.failing),
    },
  });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-double.toml",
    `id = "P01"\ngoal = "Add double"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/double.py"]\nbrief = "Add pkg/double.py with double(n) = n * 2."\n[[invariants]]\nid = "doubles"\nassert = "double(n) == n * 2"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_double.py", options.planted ?? "def test_double():\n    from pkg.double import double\n    assert double(21) == 42\n");
  repo.commit("queue");
  return { repo, counter };
}

async function statusText(repo: TestRepo): Promise<string> {
  const output = bufferOutput();
  await status({ cwd: repo.dir, id: undefined, json: false, output });
  return output.text();
}

describe.skipIf(!available)("flaky tests are told from regressions", { timeout: 180_000 }, () => {
  it("a test that fails one run in three fails by chance in the candidate and flips on the tip: flaky, left out, recorded, named; the honest packet merges", async () => {
    const { repo, counter } = target({ failing: [1, 4] });
    const { code, out, record, events } = await queue.run(repo, HONEST);
    expect(record?.status.state, out).toBe("merged");
    expect(code).toBe(0);
    expect(Number(readFileSync(counter, "utf8"))).toBe(6); // baseline, suite, two reruns here, two at the tip
    const found = events.filter((event) => event.kind === "flaky-found");
    expect(found).toMatchObject([{ packet: "P01", gate: "pytest", test: "tests.test_net::test_timeout", tipRuns: ["passed", "failed", "passed"], candidateRuns: ["failed", "passed", "passed"] }]);
    const gate = events.find((event) => event.kind === "gate-finished" && event.gate === "pytest");
    expect(gate).toMatchObject({ result: "pass" });
    expect(gate && "detail" in gate ? gate.detail : "").toContain("left out: flaky at the tip: tests.test_net::test_timeout, 1 of 3 runs failed");
    expect(await statusText(repo)).toContain("flaky at the tip: tests.test_net::test_timeout, 1 of 3 runs failed (gate pytest, found gating P01)");
    const brief = readdirSync(join(repo.dir, ".factory/runs")).find((name) => /^report-.*\.txt$/.test(name)) ?? "";
    expect(readFileSync(join(repo.dir, ".factory/runs", brief), "utf8")).toContain("Flaky tests (1)\n  flaky at the tip: tests.test_net::test_timeout, 1 of 3 runs failed");
  });

  it("a known flaky test that a later packet's reruns find steady at the tip is no longer excused, and no longer named", async () => {
    // P01: as above (1 and 4 fail). P02's runs (its baseline is the one P01's landing seeded): the suite (6), two reruns (7, 8), two at the tip (9, 10).
    const { repo } = target({ failing: [1, 4, 6, 7, 8] });
    const spec = repo.git("rev-parse", "HEAD~1").trim();
    repo.write(
      "packets/P02-triple.toml",
      `id = "P02"\ngoal = "Add triple"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/triple.py"]\nbrief = "Add pkg/triple.py."\n[[invariants]]\nid = "triples"\nassert = "triple(n) == n * 3"\n`,
    );
    repo.write("packets/supplied/P02/tests/test_triple.py", "def test_triple():\n    from pkg.triple import triple\n    assert triple(2) == 6\n");
    repo.commit("P02");
    const script = { ...HONEST, P02: { implementer: [{ write: { "pkg/triple.py": "def triple(n):\n    return n * 3\n" } }], reviewer: [{ evidence: "pkg/triple.py:1" }] } };
    const { events, state, out } = await queue.run(repo, script);
    expect(state.packets.get("P01")?.status.state, out).toBe("merged");
    expect(state.packets.get("P02")?.status.state, out).toBe("blocked");
    expect(events.filter((event) => event.kind === "flaky-steady")).toMatchObject([{ packet: "P02", test: "tests.test_net::test_timeout", tipRuns: ["passed", "passed", "passed"] }]);
    expect(state.flaky).toEqual({});
    expect(await statusText(repo)).not.toContain("flaky at the tip");
  });

  it("a test that fails every run in the candidate and passes every run at the tip is a regression, as before", async () => {
    const { repo, counter } = target({ failing: [1, 2, 3] });
    const { record, events } = await queue.run(repo, HONEST);
    expect(record?.status.state).toBe("blocked");
    expect(Number(readFileSync(counter, "utf8"))).toBe(6);
    expect(events.some((event) => event.kind === "flaky-found")).toBe(false);
    const gate = events.find((event) => event.kind === "gate-finished" && event.gate === "pytest");
    expect(gate).toMatchObject({ result: "fail" });
    expect(gate && "detail" in gate ? gate.detail : "").toContain("1 regression(s)");
  });

  it("a test that failed once in the candidate and passed every run at the tip, rerun there twice as often, stays the change's failure", async () => {
    const { repo, counter } = target({ failing: [1] });
    const { record, events, out } = await queue.run(repo, HONEST);
    expect(record?.status.state, out).toBe("blocked");
    expect(Number(readFileSync(counter, "utf8"))).toBe(8); // two more runs at the tip before it is blamed
    expect(events.some((event) => event.kind === "flaky-found")).toBe(false);
    const decided = events.find((event) => event.kind === "decided");
    expect(JSON.stringify(decided)).toContain("tests.test_net::test_timeout: fails 1 of 3 runs here and passed all 5 runs at the tip");
  });

  it("with [tests] reruns = 0 nothing is run again: a chance failure is a regression", async () => {
    const { repo, counter } = target({ failing: [1], config: "[tests]\nreruns = 0\n" });
    const { record } = await queue.run(repo, HONEST);
    expect(record?.status.state).toBe("blocked");
    expect(Number(readFileSync(counter, "utf8"))).toBe(2);
  });

  it("a planted case that passes by luck is never merged: its runs disagree, so the packet is defective", async () => {
    const dir = mkdtempSync(join(tmpdir(), "factory-flaky-planted-"));
    made.push(dir);
    // Its runs: the planted check before the work (0, fails: no module yet), the suite (1), on its own twice (2, 3, the last failing).
    const planted = scheduled("test_double", join(dir, "runs"), [3], "from pkg.double import double\n    assert double(21) == 42").replace(
      "    assert n not in",
      "    from pkg.double import double  # noqa: F401 (fails before the work)\n    assert n not in",
    );
    const { repo } = target({ failing: [], planted });
    const { record, events, out } = await queue.run(repo, HONEST);
    expect(record?.status.state, out).toBe("blocked");
    expect(record?.reason).toContain("planted case flips: tests.test_double::test_double (passed 2 of 3 runs)");
    expect(events.filter((event) => event.kind === "claimed")).toHaveLength(1);
  });
});
