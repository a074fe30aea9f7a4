import { afterEach, describe, expect, it } from "vitest";
import { LiveLedger } from "../../src/commands/board.js";
import { loadWorkspace } from "../../src/commands/workspace.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

describe("the board's reading of the ledger", () => {
  it("folds each line once when reads overlap (two changes close together)", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, cost: 0.5 }] } } });
    await target.run();
    const load = await loadWorkspace(target.dir);
    if (!load.ok) throw new Error("no workspace");
    const live = new LiveLedger(load.workspace);
    await Promise.all([live.refresh(), live.refresh(), live.refresh()]);
    const [row] = await live.rows();
    const record = await target.record("P01");
    expect(row).toMatchObject({ id: "P01", state: "merged", attempt: record?.attemptsUsed });
    expect(row?.costUsd).toBeCloseTo(record?.costUsd ?? -1);
  }, 60_000);
});
