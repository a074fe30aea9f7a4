import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { PYTEST_GATE, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * A planted test file for a module the packet creates, written the way nearly every pytest file is:
 * the import at the top. Before the work the file cannot be collected, so none of its cases is known;
 * after it, every one of its cases must pass (issue 38 §1). The same file with the import inside the
 * tests (its cases known before the work) is judged the same way.
 */
const available = pytestAvailable("the planted-file collection tests");
const queue = usePythonQueue(afterEach);

const CASES = "def test_twice():\n    assert twice(21) == 42\n\n\ndef test_twice_negative():\n    assert twice(-3) == -6\n";
const IMPORT_AT_TOP = `from pkg.twice import twice\n\n\n${CASES}`;
const IMPORT_INSIDE = CASES.replaceAll(":\n    assert", ":\n    from pkg.twice import twice\n\n    assert");

function target(planted: string, gate = PYTEST_GATE): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { gate, config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
  const spec = repo.commit("python project");
  repo.write(
    "packets/P01-twice.toml",
    `id = "P01"\ngoal = "Add twice"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/**"]\nbrief = "Add pkg/twice.py with twice(n) = n * 2."\n[[invariants]]\nid = "twice"\nassert = "twice(n) == n * 2"\n`,
  );
  repo.write("packets/supplied/P01/tests/test_twice.py", planted);
  repo.commit("queue");
  return repo;
}

/** Right for 21, wrong for -3: one planted case passes, the other fails. */
const WRONG = { P01: { implementer: [{ write: { "pkg/twice.py": "def twice(n):\n    return abs(n) * 2\n" } }], reviewer: [{ evidence: "pkg/twice.py:2" }] } };
const HONEST = { P01: { implementer: [{ write: { "pkg/twice.py": "def twice(n):\n    return n * 2\n" } }], reviewer: [{ evidence: "pkg/twice.py:2" }] } };

describe.skipIf(!available).each([
  ["the import at the top (not collectable before the work)", IMPORT_AT_TOP, PYTEST_GATE],
  ["the import inside the tests (its cases known before the work)", IMPORT_INSIDE, PYTEST_GATE],
  ["the import at the top, the planted file run alone through {tests}", IMPORT_AT_TOP, `${PYTEST_GATE} {tests}`],
])("a planted file with %s", (_shape, planted, gate) => {
  it("blocks work that passes one planted case and fails the other; nothing lands", async () => {
    const repo = target(planted, gate);
    const before = repo.git("rev-parse", "main");
    const { code, out, record, events } = await queue.run(repo, WRONG);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(out).toContain("gate pytest: fail — 1 planted test(s) not passing of 3");
    const feedback = events.flatMap((event) => (event.kind === "decided" ? (event.feedback ?? []) : [])).join("\n");
    expect(feedback).toMatch(/tests\.test_twice::test_twice_negative: (case of planted file tests\/test_twice\.py fails|planted test fails)/);
    expect(out).not.toMatch(/pytest: pass/);
    expect(repo.git("rev-parse", "main")).toBe(before);
  });

  it("merges work that passes every planted case", async () => {
    const repo = target(planted, gate);
    const { code, out, record } = await queue.run(repo, HONEST);
    expect(out).not.toContain("case of planted file");
    expect(code).toBe(0);
    expect(record?.status.state).toBe("merged");
  });
});
