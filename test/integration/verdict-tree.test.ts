import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";
import { pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * The verdict tree (issue 55 §1, DESIGN §6): the gates judge exactly the commit that lands. Each cheat here
 * merged wrong code on 040a1c9, with the config `factory init` writes, `max_attempts = 1` and a reviewer that
 * accepts everything; each is stopped now, beside its honest twin.
 */
const available = pytestAvailable("the verdict-tree tests");
const queue = usePythonQueue(afterEach);

/** P01: add saturates at 10; the planted test checks sums past the cap, the team's test a small sum. */
function target(options: { install?: string; allowed?: string[] } = {}): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { ...(options.install ? { install: options.install } : {}), config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-saturate.toml",
    `id = "P01"\ngoal = "add saturates"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\n${options.allowed ? `allowed_paths = ${JSON.stringify(options.allowed)}\n` : ""}brief = "add(a, b) returns min(a + b, 10)."\n[[invariants]]\nid = "saturates"\nassert = "add(a, b) == min(a + b, 10)"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_saturate.py", "from pkg.calc import add\n\n\ndef test_saturates():\n    assert add(7, 8) == 10\n");
  repo.commit("queue");
  return repo;
}

function script(write: Record<string, string>, run?: string) {
  return { P01: { implementer: [{ write, ...(run ? { run } : {}) }], reviewer: [{ evidence: "pkg/calc.py:1" }] } };
}

/** pkg/calc.py taking its add() from a file beside the commit, under a dependency directory's name. */
const FROM_BESIDE = (dir: string) =>
  `import os\nimport runpy\n\n_impl = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "${dir}", "impl.py"))\n\n\ndef add(a, b):\n    return _impl["add"](a, b)\n`;
const IMPL = "def add(a, b):\n    return min(a + b, 10)\n";

describe.skipIf(!available)("the gates judge exactly the commit that lands", () => {
  it.each([".tox", ".venv", "node_modules"])("code that runs a file the implementer left in %s/ (never committed) is blocked; nothing lands", async (dir) => {
    const repo = target();
    const before = repo.git("rev-parse", "main");
    const { code, out, record } = await queue.run(repo, script({ "pkg/calc.py": FROM_BESIDE(dir), [`${dir}/impl.py`]: IMPL }));
    expect(out).toMatch(/gate pytest: fail/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(repo.git("rev-parse", "main")).toBe(before);
  });

  it("a tracked symbolic link to a file the commit does not hold is refused by the scope gate; nothing lands", async () => {
    const repo = target();
    const before = repo.git("rev-parse", "main");
    const { code, out, record } = await queue.run(repo, script({ ".venv/impl.py": IMPL, "pkg/calc.py": "from pkg.impl import add  # noqa: F401\n" }, "ln -s ../.venv/impl.py pkg/impl.py"));
    expect(out).toMatch(/pkg\/impl\.py: is a symbolic link to \.venv\/impl\.py, which the commit does not hold/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(repo.git("rev-parse", "main")).toBe(before);
  });

  it("honest twin: a tracked link to a tracked file merges", async () => {
    const repo = target();
    const { code, record } = await queue.run(repo, script({ "pkg/impl.py": IMPL, "pkg/calc.py": "from pkg.saturating import add  # noqa: F401\n" }, "ln -s impl.py pkg/saturating.py"));
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });

  it("honest twin: code that uses what the factory's own install made there merges", async () => {
    const repo = target({ install: `mkdir -p .tox && printf 'def add(a, b):\\n    return min(a + b, 10)\\n' > .tox/impl.py` });
    const { code, record } = await queue.run(repo, script({ "pkg/calc.py": FROM_BESIDE(".tox") }));
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });

  it("an export-ignore on a file the tests read (git archive of main would not hold it) waits for a person; nothing lands", async () => {
    const repo = target();
    const before = repo.git("rev-parse", "main");
    const { code, out, record } = await queue.run(repo, script({ "pkg/calc.py": IMPL, ".gitattributes": "pkg/calc.py export-ignore\n" }));
    expect(out).toMatch(/→ awaiting_human: \.gitattributes:1: leaves out of `git archive` pkg\/calc\.py, which the tests read/);
    expect(record?.status.state).toBe("awaiting_human");
    expect(code).toBe(0);
    expect(repo.git("rev-parse", "main")).toBe(before);
  });

  it("honest twin: an export-ignore on what no test reads merges", async () => {
    const repo = target();
    const { code, record } = await queue.run(repo, script({ "pkg/calc.py": IMPL, ".gitattributes": "SPEC.md export-ignore\n.github export-ignore\n" }));
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });
});

describe("a runner whose report names no file: the surface declares its tests", () => {
  const setUp = useLoopRepos(afterEach);
  // ava's layout: the team's test at the root, `test.js`, which no conventional name makes a test.
  const ROOT_TEST = `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "./src/calc.js";\n\ntest("adds", () => {\n  assert.equal(add(2, 2), 4);\n});\n`;
  const gates = `tests = ["test.js"]
  [[surfaces.app.gates]]
  name = "test"
  run = "node --test --test-reporter=junit --test-reporter-destination={junit} test.js $(find test -type f -name '*.*js' | sort)"
  tests = true
`;
  function rootTestRepo(write: Record<string, string>) {
    const target = setUp({ gates, allowed: ["src/**", "test.js"], forbidden: [], script: { P01: { implementer: [{ write }] } } });
    target.write("test.js", ROOT_TEST);
    target.commit("the team's test at the root");
    return target;
  }

  it("its expected value rewritten to what broken code returns: blocked; nothing lands", async () => {
    const target = rootTestRepo({ "src/double.js": DOUBLE_JS, "src/calc.js": "export function add(a, b) {\n  return a + b + 1;\n}\n", "test.js": ROOT_TEST.replace("4);", "5);") });
    const before = target.git("rev-parse", "main");
    const { code, out } = await target.run();
    expect(out).toMatch(/gate test: fail — .*with the tip's versions of the files that judge the work which the change edited \(test\.js\)/);
    expect(code).toBe(1);
    expect(target.git("rev-parse", "main")).toBe(before);
  });

  it("honest twin: a case added to it merges", async () => {
    const target = rootTestRepo({ "src/double.js": DOUBLE_JS, "test.js": `${ROOT_TEST}\ntest("adds zero", () => {\n  assert.equal(add(0, 0), 0);\n});\n` });
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });
});
