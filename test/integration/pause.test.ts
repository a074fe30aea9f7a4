import { afterEach, describe, expect, it } from "vitest";
import { runCli, runCliAsync } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * `factory pause` and `factory resume` (issue 56 §2): one switch for every worker of a ledger. Here on the
 * file ledger of one machine; the same events stop the workers of a shared one (each looks before every
 * claim, and every few seconds while attempts run).
 */
const setUp = useLoopRepos(afterEach);
const HONEST = { write: { "src/double.js": DOUBLE_JS } };

describe("pause and resume", () => {
  it("a run started while paused claims nothing and says who paused it; status says so; after resume the run lands", async () => {
    const target = setUp({ script: { P01: { implementer: [HONEST] } } });
    const paused = runCli(["pause", "--yes"], target.dir);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/paused by .+\. No worker claims a packet now; running attempts finish/);
    const status = runCli(["status"], target.dir);
    expect(status.stdout).toMatch(/paused by .+ at \d{4}-\d\d-\d\dT[\d:.]+Z: no worker claims a packet; factory resume lifts it\./);
    expect(JSON.parse(runCli(["status", "--json"], target.dir).stdout)).toMatchObject({ paused: { interrupt: false } });

    const halted = await target.run();
    expect(halted.code).toBe(1);
    expect(halted.out).toMatch(/paused by .+: nothing more is claimed; factory resume, then start the run again/);
    expect((await target.events("P01")).filter((event) => event.kind === "claimed")).toEqual([]);

    expect(runCli(["resume", "--yes"], target.dir).code).toBe(0);
    expect(runCli(["status"], target.dir).stdout).not.toContain("paused by");
    const landed = await target.run();
    expect(landed.code, landed.out).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
  }, 60_000);

  it("--interrupt stops an attempt that is running: recorded interrupted, not spent, and the run ends saying why", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...HONEST, sleep: 120_000 }] } } });
    const running = target.run();
    // Waits on the ledger: the implementer's call has started.
    for (;;) {
      if ((await target.events("P01")).some((event) => event.kind === "agent-started")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const paused = await runCliAsync(["pause", "--interrupt", "--yes"], target.dir);
    expect(paused.code, paused.stderr).toBe(0);
    const ended = await running;
    expect(ended.code).toBe(1);
    expect(ended.out).toMatch(/run halted: paused by .+: nothing more is claimed; factory resume, then start the run again/);
    const record = await target.record("P01");
    expect(record).toMatchObject({ status: { state: "queued" }, attemptsUsed: 0 });
    expect(record?.reason).toMatch(/attempt 1 was interrupted: paused by .+ \(factory pause --interrupt\)/);
  }, 60_000);

  it("is a person's command: refused for an agent, and without --yes off a terminal", () => {
    const target = setUp({ script: { P01: { implementer: [HONEST] } } });
    const agent = runCli(["pause", "--yes"], target.dir, { FACTORY_ROLE: "implementer" });
    expect(agent.code).toBe(2);
    const unattended = runCli(["pause"], target.dir);
    expect(unattended.code).toBe(2);
    expect(unattended.stderr).toContain("factory pause needs a person");
    expect(runCli(["status"], target.dir).stdout).not.toContain("paused by");
  });
});
