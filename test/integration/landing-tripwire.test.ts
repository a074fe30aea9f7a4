import { afterEach, describe, expect, it, vi } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { PYTEST_GATE, pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * The landing's own check (src/gates/landing-tripwire.ts) stands behind the gates' verdict: if the
 * verdict ever passes a tree whose tests fail, nothing lands and the queue stops, loudly. To make it
 * fire, this file puts back the hole of issue 38 §1 in the gates: the planted-file check that let a
 * planted file pass as soon as any one of its cases passed (and took its cases out of the regression
 * check). Everything else is the real run, through real pytest.
 */
vi.mock(import("../../src/gates/test-compare.js"), async (importOriginal) => {
  const real = await importOriginal();
  return {
    ...real,
    checkPlanted: (input: Parameters<typeof real.checkPlanted>[0]) => {
      const owned = input.now.filter((result) => result.id.startsWith("tests.test_twice::"));
      const anyPasses = owned.some((result) => result.outcome === "passed");
      return { findings: anyPasses ? [] : [{ id: "tests/test_twice.py", message: "no test of this planted file passes" }], covered: new Set(owned.map((result) => result.id)), unchecked: [] };
    },
  };
});

const available = pytestAvailable("the landing tripwire tests");
const queue = usePythonQueue(afterEach);

const PLANTED = "from pkg.twice import twice\n\n\ndef test_twice():\n    assert twice(21) == 42\n\n\ndef test_twice_negative():\n    assert twice(-3) == -6\n";

function target(config = ""): TestRepo {
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, { gate: PYTEST_GATE, config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n${config}` });
  const spec = repo.commit("python project");
  for (const [id, brief] of [
    ["P01", "Add pkg/twice.py with twice(n) = n * 2."],
    ["P02", "Add pkg/thrice.py with thrice(n) = n * 3."],
  ] as const) {
    repo.write(
      `packets/${id}-work.toml`,
      `id = "${id}"\ngoal = "${brief}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ["pkg/**"]\nbrief = "${brief}"\n[[invariants]]\nid = "works"\nassert = "it works"\n`,
    );
  }
  repo.write("packets/supplied/P01/tests/test_twice.py", PLANTED);
  repo.write("packets/supplied/P02/tests/test_thrice.py", "def test_thrice():\n    from pkg.thrice import thrice\n\n    assert thrice(2) == 6\n");
  repo.commit("queue");
  return repo;
}

const P02 = { implementer: [{ write: { "pkg/thrice.py": "def thrice(n):\n    return n * 3\n" } }], reviewer: [{ evidence: "pkg/thrice.py:2" }] };
/** Right for 21, wrong for -3: the weakened verdict passes it. */
const WRONG = { P01: { implementer: [{ write: { "pkg/twice.py": "def twice(n):\n    return abs(n) * 2\n" } }], reviewer: [{ evidence: "pkg/twice.py:2" }] }, P02 };
const HONEST = { P01: { implementer: [{ write: { "pkg/twice.py": "def twice(n):\n    return n * 2\n" } }], reviewer: [{ evidence: "pkg/twice.py:2" }] }, P02 };

describe.skipIf(!available)("the landing tripwire", () => {
  it("fires when the verdict passed a tree whose tests fail: nothing lands, and the queue stops even with --keep-going", async () => {
    const repo = target('on_block = "continue"\n');
    const before = repo.git("rev-parse", "main");
    const { code, out, record, state } = await queue.run(repo, WRONG);
    // The weakened gate passed it: the tripwire is what stopped it.
    expect(out).toMatch(/gate pytest: pass/);
    expect(code).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect(record?.reason).toContain("ALARM: the factory's own verdict passed a tree whose tests fail: tests.test_twice::test_twice_negative (not on the tip)");
    expect(record?.reason).toContain("factory unblock P01");
    expect(repo.git("rev-parse", "main")).toBe(before);
    // The queue stopped: the packet behind it never ran.
    expect(state.packets.get("P02")?.status.state ?? "queued").toBe("queued");
  });

  it("stays quiet on honest work: both packets land", async () => {
    const repo = target('on_block = "continue"\n');
    const { code, out, state } = await queue.run(repo, HONEST);
    expect(out).not.toContain("ALARM");
    expect(code).toBe(0);
    expect(state.packets.get("P01")?.status.state).toBe("merged");
    expect(state.packets.get("P02")?.status.state).toBe("merged");
  });
});
