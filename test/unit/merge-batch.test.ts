import { describe, expect, it } from "vitest";
import { mergePlantedCases } from "../../src/loop/gates.js";
import { firstRedPrefix } from "../../src/merge/batch.js";
import { mayArriveBy, regateEstimate } from "../../src/merge/landing-queue.js";

describe("a merge batch's pure parts", () => {
  it("joins the planted cases of every member per tests gate, so each member's cases must pass on the combination", () => {
    const merged = mergePlantedCases([
      { pytest: { cases: ["tests/test_a.py::test_a"], files: ["tests/test_a.py"] } },
      { pytest: { cases: ["tests/test_b.py::test_b"], files: ["tests/test_b.py"], removed: ["tests/test_old.py::test_old"] }, vitest: { cases: ["x"], files: ["x.test.ts"] } },
    ]);
    expect(merged).toEqual({
      pytest: { cases: ["tests/test_a.py::test_a", "tests/test_b.py::test_b"], files: ["tests/test_a.py", "tests/test_b.py"], removed: ["tests/test_old.py::test_old"] },
      vitest: { cases: ["x"], files: ["x.test.ts"] },
    });
  });

  it("waits for others no longer than a re-gate would take: the command gates' time, not the built-in ones'", () => {
    const gate = (name: string, durationMs: number) => ({ name, status: "pass" as const, summary: "", findings: [], durationMs });
    const provenance = { attempt: 1, gates: [gate("scope", 5_000), gate("tamper", 5_000), gate("pytest", 2_000), gate("pytest (planted only)", 500)], counts: undefined };
    expect(regateEstimate({ provenance })).toBe(2_500);
  });

  it("waits only for an attempt in flight that may ask to land by the deadline, as quickly as the run's quickest did", () => {
    const landed = { started: 0, arrived: 9_000 }; // asked already: not awaited
    const early = { started: 1_000 };
    const late = { started: 5_000 };
    expect(mayArriveBy([landed, early, late], 3_000, 4_000)).toBe(true); // early: 1 s + 3 s, just in time
    expect(mayArriveBy([landed, late], 3_000, 4_000)).toBe(false); // late would need until 8 s
    expect(mayArriveBy([landed], 0, 4_000)).toBe(false);
    expect(mayArriveBy([late], Number.POSITIVE_INFINITY, 4_000)).toBe(false); // no attempt has asked yet: none is awaited
  });
});

describe("the merge batch's bisection", () => {
  /** A combination of `members` whose prefixes are red from member `culprit` on; the gatings asked for are kept. */
  const combination = (members: number, culprit: number) => {
    const asked: number[] = [];
    const gate = async (count: number) => {
      asked.push(count);
      return { count, green: count < culprit };
    };
    return { asked, gate, whole: { count: members, green: false } };
  };

  it("finds the first member that makes the combination red, whatever its place, in about log2 gatings", async () => {
    for (let members = 1; members <= 9; members++) {
      for (let culprit = 1; culprit <= members; culprit++) {
        const { asked, gate, whole } = combination(members, culprit);
        const found = await firstRedPrefix(whole, gate);
        expect(found.red?.count, `${members} members, red from ${culprit}`).toBe(culprit);
        expect(found.greenest?.count ?? 0).toBe(culprit - 1);
        expect(asked.length).toBeLessThanOrEqual(Math.ceil(Math.log2(members)));
      }
    }
  });

  it("blames nobody when a step cannot be gated", async () => {
    const found = await firstRedPrefix({ count: 4, green: false }, async (count) => (count === 2 ? undefined : { count, green: false }));
    expect(found.red).toBeUndefined();
  });
});
