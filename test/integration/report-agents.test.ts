import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/** `factory report --agents` (issue 56 §9): per agent and model, what it claimed set against what the factory found, from the ledger. */
const setUp = useLoopRepos(afterEach);

describe("report --agents", () => {
  it("counts the attempts, the first-time merges, a 'complete' said while a gate failed, and the cost per merged packet", async () => {
    const wrong = { write: { "src/double.js": "export function double(n) {\n  return n * 3;\n}\n" }, cost: 0.5 };
    const target = setUp({ script: { P01: { implementer: [wrong, { write: { "src/double.js": DOUBLE_JS }, cost: 0.25 }] } } });
    const ran = await target.run();
    expect(ran.code, ran.out).toBe(0);
    const report = runCli(["report", "--agents", "--json"], target.dir);
    expect(report.code, report.stderr).toBe(0);
    const { agents } = JSON.parse(report.stdout) as { agents: Record<string, unknown>[] };
    expect(agents.find((row) => row.role === "implementer")).toMatchObject({
      agent: "scripted",
      model: "m-standard",
      attempts: 2,
      merged: 1,
      merged_first_time: 0,
      claimed_complete_gate_failed: 1,
      tamper_or_scope: 0,
      cost_usd: 0.75,
      cost_per_merged_usd: 0.75,
    });
    expect(agents.find((row) => row.role === "reviewer")).toMatchObject({ agent: "scripted", attempts: 1 });
    const text = runCli(["report", "--agents"], target.dir);
    expect(text.stdout).toMatch(/IMPLEMENTER\s+MODEL\s+ATTEMPTS\s+MERGED 1ST\s+MERGED\s+SAID DONE, GATE FAILED/);
    expect(text.stdout).toMatch(/scripted\s+m-standard\s+2\s+0\s+1\s+1\s+0\s+0\s+\$0\.75\s+\$0\.75/);
  }, 60_000);

  it("says so when no agent has run", () => {
    const target = setUp({ script: { P01: { implementer: [] } } });
    const report = runCli(["report", "--agents"], target.dir);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain("No agent has run yet");
  });
});
