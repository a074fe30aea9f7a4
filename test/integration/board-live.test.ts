import { appendFileSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LiveLedger } from "../../src/commands/board.js";
import { loadWorkspace } from "../../src/commands/workspace.js";
import { appendEvents } from "../../src/ledger/store.js";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

describe("the board's reading of the ledger", () => {
  it("folds each line once when reads overlap (two changes close together)", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, cost: 0.5 }] } } });
    await target.run();
    // Spend that is no packet's: doctor's reviewer canary.
    await appendEvents(target.dir, [{ kind: "spent", for: "doctor's reviewer canary", agent: "scripted", model: "m", costUsd: 0.25 }]);
    const load = await loadWorkspace(target.dir);
    if (!load.ok) throw new Error("no workspace");
    const live = new LiveLedger(load.workspace);
    await Promise.all([live.refresh(), live.refresh(), live.refresh()]);
    const [row] = await live.rows();
    const record = await target.record("P01");
    expect(row).toMatchObject({ id: "P01", state: "merged", attempts: `${record?.attemptsUsed}/2` });
    expect(row?.costUsd).toBeCloseTo(record?.costUsd ?? -1);
    // The header's spend is the ledger's whole, as status says it: the canary besides the packet's calls.
    const status = JSON.parse(runCli(["status", "--json"], target.dir).stdout) as { cost_usd: number };
    expect(live.spentUsd).toBeCloseTo(status.cost_usd);
    expect(live.spentUsd).toBeGreaterThan(row?.costUsd ?? Number.POSITIVE_INFINITY);
  }, 60_000);

  it("shows the finer step of an attempt in flight from the newest run's progress log: the baseline, then a re-gate", async () => {
    const target = setUp({ script: {} });
    const load = await loadWorkspace(target.dir);
    if (!load.ok) throw new Error("no workspace");
    const packet = load.workspace.queue.packets.find((candidate) => candidate.id === "P01");
    // An attempt in flight, claimed by this (live) process.
    await appendEvents(target.dir, [{ kind: "claimed", packet: "P01", attempt: 2, run: "r2", pid: process.pid, host: hostname(), sha256: packet?.sha256 ?? "" }]);
    const log = join(target.dir, ".factory/runs", "run-9999-12-31T00-00-00.000Z.log");
    mkdirSync(join(target.dir, ".factory/runs"), { recursive: true });
    const line = (event: object) => appendFileSync(log, `${JSON.stringify({ level: 30, time: "t", ...event })}\n`);
    line({ kind: "step", packet: "P01", attempt: 1, step: "re-gate" }); // the earlier attempt's: not this one's
    line({ kind: "step", packet: "P01", attempt: 2, step: "baseline" });
    const live = new LiveLedger(load.workspace);
    await live.refresh();
    expect((await live.rows())[0]).toMatchObject({ id: "P01", state: "baseline" });
    line({ kind: "step", packet: "P01", attempt: 2, step: "re-gate", detail: "main moved" });
    expect(live.sizeChanged()).toBe(true);
    await live.refresh();
    expect((await live.rows())[0]).toMatchObject({ id: "P01", state: "re-gate" });
  }, 60_000);
});
