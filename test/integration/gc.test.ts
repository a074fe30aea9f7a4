import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gc } from "../../src/commands/gc.js";
import { runLockPath } from "../../src/ledger/run-lock.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
const MONTH_AGO = new Date(Date.now() - 30 * 86_400_000);

async function collect(target: LoopRepo, dryRun: boolean) {
  const output = bufferOutput();
  const code = await gc({ cwd: target.dir, dryRun, output, env: {} });
  return { code, out: output.text() };
}

/** P01 merged, P02 blocked (still queued), a branch of a packet no longer in the queue, and everything a month old. */
async function aNightLater(): Promise<LoopRepo> {
  const target = setUp({
    script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: [{ write: { "src/outside.js": "out of scope\n" } }] } },
    config: '[retention]\nruns = "14d"',
  });
  target.write(
    "packets/P02-triple.toml",
    target.read("packets/P01-double.toml").replaceAll("P01", "P02").replace("src/double.js", "src/triple.js").replace("Add double", "Add triple").replace("brief = ", "max_attempts = 1\nbrief = "),
  );
  target.commit("a second packet");
  await target.run({ keepGoing: true });
  target.git("branch", "factory/P09", "main"); // the branch of a packet since deleted from the queue
  const runs = join(target.dir, ".factory/runs");
  for (const name of readdirSync(runs)) utimesSync(join(runs, name), MONTH_AGO, MONTH_AGO);
  const baselines = join(target.dir, ".factory/state/baselines");
  for (const name of readdirSync(baselines)) utimesSync(join(baselines, name), MONTH_AGO, MONTH_AGO);
  writeFileSync(join(runs, "run-today.log"), "a log of today\n");
  return target;
}

describe("factory gc", () => {
  it("removes what the factory is done with, and keeps what is in play or young; --dry-run only lists", async () => {
    const target = await aNightLater();
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P02"))?.status.state).toBe("blocked");
    const listed = await collect(target, true);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("would remove branch factory/P09 and its worktree (no longer in the queue)");
    expect(listed.out).toMatch(/would remove \.factory\/runs\/P01 \([^)]*; the run directory of a packet merged\)/);
    expect(listed.out).toContain("(nothing removed: --dry-run)");
    expect(existsSync(join(target.dir, ".factory/runs/P01"))).toBe(true);
    expect(target.git("branch", "--list", "factory/P09").trim()).not.toBe("");

    const removed = await collect(target, false);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain("removed branch factory/P09 and its worktree");
    expect(target.git("for-each-ref", "--format=%(refname:short)", "refs/heads/factory/").trim()).toBe("factory/P02"); // blocked, still queued: its work is kept
    expect(existsSync(join(target.dir, ".factory/runs/P01"))).toBe(false);
    expect(existsSync(join(target.dir, ".factory/runs/P02"))).toBe(true);
    expect(existsSync(join(target.dir, ".factory/runs/run-today.log"))).toBe(true);
    expect(readdirSync(join(target.dir, ".factory/state/baselines"))).toEqual([]);
    expect((await collect(target, false)).out).toContain("nothing to remove");
  });

  it("removes a held attempt's ref a killed approve left on a packet since merged, and keeps one the ledger does not know of", async () => {
    const target = await aNightLater();
    const main = target.git("rev-parse", "main").trim();
    target.git("update-ref", "refs/factory/held/P01", main); // what an approve killed after its landing leaves
    target.git("update-ref", "refs/factory/held/P07", main); // held work of a packet the ledger lost: recorded again by status, never collected
    const removed = await collect(target, false);
    expect(removed.out).toContain("removed refs/factory/held/P01, its held attempt (its packet has merged since)");
    expect(target.git("for-each-ref", "--format=%(refname)", "refs/factory/held/").trim()).toBe("refs/factory/held/P07");
  });

  it("at the end of a run, removes what aged out but leaves a packet that left the queue to a person's gc", async () => {
    const target = await aNightLater();
    await target.run();
    expect(existsSync(join(target.dir, ".factory/runs/P01"))).toBe(false);
    expect(target.git("branch", "--list", "factory/P09").trim()).not.toBe("");
  });

  it("waits for a run: refused while one holds the run lock", async () => {
    const target = await aNightLater();
    writeFileSync(runLockPath(target.dir), JSON.stringify({ run: "r", pid: process.pid, host: hostname(), startedAt: new Date().toISOString() }));
    const { code, out } = await collect(target, false);
    expect(out).toContain("a run holds");
    expect(code).toBe(2);
    expect(existsSync(join(target.dir, ".factory/runs/P01"))).toBe(true);
  });
});
