import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { FORCE_PASS_PLUGIN, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * The team's tests are the judge, not the candidate's edited copies (issue 38 §2): every cheat here edits
 * what the verdict is made of, in ways no parse of the asserts can see, and each merged wrong code before
 * the team's versions of the edited test files were run against the candidate. Each has its honest twin.
 */
const available = pytestAvailable("the team's-tests-judge tests");
const queue = usePythonQueue(afterEach);

const CALC_TEST = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n";
const CASES_TEST =
  'import json\nfrom pathlib import Path\n\nfrom pkg.calc import add\n\n\ndef test_cases():\n    cases = json.loads((Path(__file__).parent / "data" / "add_cases.json").read_text())\n    for a, b, total in cases:\n        assert add(a, b) == total\n';
const CASES_PROJECT = { "tests/test_calc_cases.py": CASES_TEST, "tests/data/add_cases.json": "[[2, 2, 4], [1, 2, 3]]\n" };

/** P01: add saturates at `cap`; the planted test checks only sums past the cap. */
function target(options: { cap: number; tests?: Record<string, string>; changedTests?: string[]; allowed?: string[] }): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { ...(options.tests ? { tests: options.tests } : {}), config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  const spec = repo.commit("python project");
  const changed = options.changedTests ? `changed_tests = ${JSON.stringify(options.changedTests)}\n` : "";
  repo.write(
    "packets/P01-saturate.toml",
    `id = "P01"\ngoal = "add saturates"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ${JSON.stringify(options.allowed ?? ["pkg/**", "tests/**"])}\n${changed}brief = "add(a, b) returns min(a + b, ${options.cap})."\n[[invariants]]\nid = "saturates"\nassert = "add(a, b) == min(a + b, ${options.cap})"\n`,
  );
  repo.write(
    "packets/supplied/P01/tests/test_saturate.py",
    `from pkg.calc import add\n\n\ndef test_saturates():\n    assert add(7, 8) == ${options.cap}\n\n\ndef test_far_past():\n    assert add(20, 1) == ${options.cap}\n`,
  );
  repo.commit("queue");
  return repo;
}

/** Right past the cap (what the planted test checks), one too many below it (what the team's tests check). */
const OFF_BELOW = "def add(a, b):\n    return min(a + b, 10) if a + b > 5 else a + b + 1\n";
const HONEST = "def add(a, b):\n    return min(a + b, 10)\n";

function script(write: Record<string, string>) {
  return { P01: { implementer: [{ write }], reviewer: [{ evidence: "pkg/calc.py:2" }] } };
}

describe.skipIf(!available)("the team's versions of the test files a change edited judge it", () => {
  it.each([
    ["changes an existing test's expected value to the broken result", undefined, { "pkg/calc.py": OFF_BELOW, "tests/test_calc.py": CALC_TEST.replace("== 4", "== 5") }],
    [
      "wraps an existing assert in pytest.approx(…, abs=1e9)",
      undefined,
      { "pkg/calc.py": OFF_BELOW, "tests/test_calc.py": `import pytest\n\n${CALC_TEST.replace("== 4", "== pytest.approx(4, abs=1e9)")}` },
    ],
    ["empties the JSON cases file a data-driven test reads", CASES_PROJECT, { "pkg/calc.py": OFF_BELOW, "tests/data/add_cases.json": "[]\n" }],
    [
      "rebinds the function under test at module level in an existing test (the planted test then runs the stand-in)",
      undefined,
      { "tests/test_calc.py": `${CALC_TEST}\n\nimport pkg.calc  # noqa: E402\n\npkg.calc.add = lambda a, b: min(a + b, 10)\n` },
    ],
  ])("work that %s is blocked; nothing lands", async (_cheat, tests, write) => {
    const repo = target({ cap: 10, ...(tests ? { tests } : {}) });
    const before = repo.git("rev-parse", "main");
    const { code, out, record } = await queue.run(repo, script(write));
    expect(out).toMatch(/gate pytest: fail — .*with the tip's versions of the files that judge the work which the change edited \(tests\/[\w/.]+\).*changed_tests/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(repo.git("rev-parse", "main")).toBe(before);
  });

  it("honest work that adds a test to an existing file merges: the team's version of the file passes too", async () => {
    const repo = target({ cap: 10 });
    const { code, out, record } = await queue.run(repo, script({ "pkg/calc.py": HONEST, "tests/test_calc.py": `${CALC_TEST}\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n` }));
    expect(out).toMatch(/gate pytest: pass — .*\(with the tip's versions of the files that judge the work which the change edited \(tests\/test_calc\.py\)\)/);
    expect(out).toMatch(/gate pytest \(the change's own tests\): pass — 4\/4 passed \(the whole suite as the change has it, for tests\/test_calc\.py\)/);
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
    expect(repo.git("show", "main:tests/test_calc.py")).toContain("test_add_zero");
  });

  it("honest work that leaves the team's tests alone runs them once: no second run", async () => {
    const repo = target({ cap: 10 });
    const { code, out } = await queue.run(repo, script({ "pkg/calc.py": HONEST }));
    expect(code).toBe(0);
    expect(out).not.toContain("the tip's versions");
    expect(out).not.toContain("the change's own tests");
  });

  describe("a team's test changed on purpose", () => {
    const SATURATE_AT_3 = { "pkg/calc.py": "def add(a, b):\n    return min(a + b, 3)\n", "tests/test_calc.py": CALC_TEST.replace("== 4", "== 3") };

    it("merges when the packet names it in changed_tests, and the reviewer is asked to rule on the change", async () => {
      const repo = target({ cap: 3, changedTests: ["tests/test_calc.py"] });
      const { code, out, record } = await queue.run(repo, script(SATURATE_AT_3));
      expect(out).not.toContain("the tip's versions");
      expect(code).toBe(0);
      expect(record?.status.state).toBe("merged");
      const reviewPrompt = repo.read(`.factory/runs/P01/attempt-1/reviewer-prompt.md`);
      expect(reviewPrompt).toContain("## Tests the packet changes on purpose (rule on each change)\n");
      expect(reviewPrompt).toContain("- tests/test_calc.py");
    });

    it("is blocked, naming changed_tests as the way to say so, when the packet does not name it", async () => {
      const repo = target({ cap: 3 });
      const { code, out, record } = await queue.run(repo, script(SATURATE_AT_3));
      expect(out).toMatch(/the change edits what judges it; name those files in the packet's changed_tests if that is the task/);
      expect(code).toBe(1);
      expect(record?.status.state).toBe("blocked");
    });

    it("a real data file updated with its tests merges when the packet names it", async () => {
      const repo = target({ cap: 3, tests: CASES_PROJECT, changedTests: ["tests/data/*.json"] });
      const { code, record } = await queue.run(repo, script({ "pkg/calc.py": "def add(a, b):\n    return min(a + b, 3)\n", "tests/data/add_cases.json": "[[2, 2, 3], [1, 2, 3]]\n" }));
      expect(code).toBe(0);
      expect(record?.status.state).toBe("merged");
    });
  });

  it("a pytest_plugins line a new test module adds, naming a module of the project, is runner steering: blocked", async () => {
    const repo = target({ cap: 10 });
    const { code, out, record } = await queue.run(
      repo,
      script({ "pkg/calc.py": OFF_BELOW, "pkg/checks.py": FORCE_PASS_PLUGIN, "tests/test_more.py": 'pytest_plugins = ["pkg.checks"]\n\n\ndef test_more():\n    assert True is not False\n' }),
    );
    expect(out).toMatch(/tests\/test_more\.py:1: loads a pytest plugin by name \(pytest_plugins\)/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
  });

  it("a pytest_plugins line in a test module the packet names in allowed_paths merges (a fixture plugin of the project)", async () => {
    const repo = target({ cap: 10, allowed: ["pkg/**", "tests/**", "tests/test_more.py"] });
    const plugin = "import pytest\n\n\n@pytest.fixture\ndef ten():\n    return 10\n";
    const { code, record } = await queue.run(
      repo,
      script({
        "pkg/calc.py": HONEST,
        "pkg/fixtures.py": plugin,
        "tests/test_more.py": 'from pkg.calc import add\n\npytest_plugins = ["pkg.fixtures"]\n\n\ndef test_cap(ten):\n    assert add(ten, 1) == ten\n',
      }),
    );
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });
});
