import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { plan } from "../../src/commands/plan.js";
import { status } from "../../src/commands/status.js";
import { appendEvents, ledgerPath } from "../../src/ledger/store.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { MINIMAL_CONFIG, packetToml } from "../helpers/packets.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

function queue(packets: Record<string, string>): TestRepo {
  repo = makeRepo();
  repo.write(".factory/config.toml", MINIMAL_CONFIG);
  for (const [file, extra] of Object.entries(packets)) {
    const id = file.split("-")[0] ?? file;
    repo.write(`packets/${file}.toml`, packetToml(id, { extra }));
  }
  repo.commit("queue");
  return repo;
}

/** The version the ledger records for a committed packet file. */
function version(file: string): string {
  return createHash("sha256")
    .update(repo.read(`packets/${file}.toml`))
    .digest("hex");
}

async function planJson() {
  const output = bufferOutput();
  const code = await plan({ cwd: repo.dir, json: true, output });
  return { code, report: JSON.parse(output.stdout.join("\n")) as { order: { id: string; gate: string }[]; unreachable: { id: string; reason: string }[]; merged: string[] } };
}

async function statusJson() {
  const output = bufferOutput();
  const code = await status({ cwd: repo.dir, id: undefined, json: true, output });
  return {
    code,
    board: JSON.parse(output.stdout.join("\n")) as {
      packets: { id: string; state: string; attempts_used: number; max_attempts: number; cost_usd: number; reason: string | null; note: string | null }[];
      warnings: string[];
      cost_usd: number;
      counts: Record<string, number>;
    },
  };
}

describe("factory plan", () => {
  it("orders dependencies first, then file order, and marks human-gated packets", async () => {
    queue({ "A01-a": `requires = ["A03"]`, "A02-b": `gate = "human"`, "A03-c": "" });
    const output = bufferOutput();
    expect(await plan({ cwd: repo.dir, json: false, output })).toBe(0);
    const text = output.stdout.join("\n");
    expect(text).toMatch(/1\. A02 .*\[human gate\]/);
    expect(text).toMatch(/2\. A03 /);
    expect(text).toMatch(/3\. A01 .*after A03/);
    const { report } = await planJson();
    expect(report.order.map((step) => step.id)).toEqual(["A02", "A03", "A01"]);
    expect(report.order[0]?.gate).toBe("human");
  });

  it("reports unreachable packets with the reason and exits 2", async () => {
    queue({ "A01-a": `requires = ["Z9"]`, "A02-b": `requires = ["A03"]`, "A03-c": `requires = ["A02"]`, "A04-d": `requires = ["A01"]`, "A05-e": "" });
    const { code, report } = await planJson();
    expect(code).toBe(2);
    expect(report.order.map((step) => step.id)).toEqual(["A05"]);
    expect(report.unreachable).toEqual([
      { id: "A01", reason: expect.stringContaining('depends on unknown packet "Z9"') },
      { id: "A02", reason: expect.stringContaining("dependency cycle: A02 → A03 → A02") },
      { id: "A03", reason: expect.stringContaining("dependency cycle") },
      { id: "A04", reason: 'requires "A01", which cannot run' },
    ]);
  });

  it("leaves merged packets out and waits on blocked ones", async () => {
    queue({ "A01-a": "", "A02-b": `requires = ["A01"]`, "A03-c": "", "A04-d": `requires = ["A03"]` });
    const V: Record<string, string> = { A01: version("A01-a"), A03: version("A03-c") };
    const owner = { run: "r", pid: 1, host: "h" };
    await appendEvents(repo.dir, [
      { kind: "claimed", packet: "A01", attempt: 1, sha256: V.A01!, ...owner },
      { kind: "merged", packet: "A01", attempt: 1, commit: "c", tree: "t" },
      { kind: "claimed", packet: "A03", attempt: 1, sha256: V.A03!, ...owner },
      { kind: "blocked", packet: "A03", attempt: 1, reason: "planted test edited" },
    ]);
    const { report } = await planJson();
    expect(report.merged).toEqual(["A01"]);
    expect(report.order.map((step) => step.id)).toEqual(["A02"]);
    expect(report.unreachable).toEqual([
      { id: "A03", reason: "blocked: planted test edited (factory unblock A03)" },
      { id: "A04", reason: 'requires "A03", which cannot run' },
    ]);
  });
});

describe("factory status", () => {
  it("agrees with the packets when nothing has run", async () => {
    queue({ "A01-a": "", "A02-b": "max_attempts = 5" });
    const { code, board } = await statusJson();
    expect(code).toBe(0);
    expect(board.packets.map((p) => [p.id, p.state, p.attempts_used, p.max_attempts, p.cost_usd])).toEqual([
      ["A01", "queued", 0, 3, 0],
      ["A02", "queued", 0, 5, 0],
    ]);
  });

  it("folds the ledger into states, attempts, cost and reasons", async () => {
    queue({ "A01-a": "", "A02-b": "", "A03-c": `gate = "human"`, "A04-d": "bogus = 1" });
    const V: Record<string, string> = { A01: version("A01-a"), A02: version("A02-b"), A03: version("A03-c") };
    const owner = { run: "r", pid: 1, host: "h" };
    await appendEvents(repo.dir, [
      { kind: "claimed", packet: "A01", attempt: 1, sha256: V.A01!, ...owner },
      { kind: "agent-finished", packet: "A01", attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.4, durationMs: 5 },
      { kind: "merged", packet: "A01", attempt: 1, commit: "abc", tree: "t" },
      { kind: "claimed", packet: "A02", attempt: 1, sha256: V.A02!, ...owner },
      { kind: "agent-finished", packet: "A02", attempt: 1, role: "implementer", outcome: "ok", costUsd: 0.1, durationMs: 5 },
      { kind: "blocked", packet: "A02", attempt: 1, reason: "planted file test/a.test.js was edited" },
      { kind: "claimed", packet: "A03", attempt: 1, sha256: V.A03!, ...owner },
      { kind: "held", packet: "A03", attempt: 1, tree: "t", branch: "factory/A03", commit: "c", fork: "f" },
    ]);
    const { board } = await statusJson();
    expect(board.packets.map((p) => [p.id, p.state, p.attempts_used, p.cost_usd])).toEqual([
      ["A01", "merged", 1, 0.4],
      ["A02", "blocked", 1, 0.1],
      ["A03", "awaiting_human", 1, 0],
      ["A04", "invalid", 0, 0],
    ]);
    expect(board.packets[1]?.reason).toBe("planted file test/a.test.js was edited");
    expect(board.packets[2]?.reason).toBe("waiting for a person: factory approve A03");
    expect(board.cost_usd).toBe(0.5);
    expect(board.counts).toMatchObject({ merged: 1, blocked: 1, awaiting_human: 1, invalid: 1 });

    const output = bufferOutput();
    await status({ cwd: repo.dir, id: undefined, json: false, output });
    const table = output.stdout.join("\n");
    expect(table).toMatch(/A02\s+blocked\s+1\/3\s+\$0\.10\s+auto\s+planted file test\/a\.test\.js was edited/);
    expect(table).toContain("spent $0.50");
  });

  it("still folds a ledger whose last line was cut mid-write, with a warning", async () => {
    queue({ "A01-a": "" });
    const V: Record<string, string> = { A01: version("A01-a") };
    await appendEvents(repo.dir, [{ kind: "claimed", packet: "A01", attempt: 1, sha256: V.A01!, run: "r", pid: 1, host: "h" }]);
    appendFileSync(ledgerPath(repo.dir), '{"v":1,"ts":"2026-01-01T00:00:00.000Z","kind":"merged","packet":"A0');
    const { code, board } = await statusJson();
    expect(code).toBe(0);
    expect(board.packets[0]).toMatchObject({ id: "A01", state: "running" });
    expect(board.packets[0]?.note).toBeNull(); // another host's run cannot be checked, so it is not called gone
    expect(board.warnings).toEqual([expect.stringContaining("ledger.jsonl:2: the last line was cut off mid-write")]);
    const output = bufferOutput();
    await status({ cwd: repo.dir, id: undefined, json: false, output });
    expect(output.stderr.join("\n")).toContain("warning: .factory/state/ledger.jsonl:2: the last line was cut off");
  });

  it("notes a running packet whose run is gone", async () => {
    queue({ "A01-a": "" });
    const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
    await appendEvents(repo.dir, [{ kind: "claimed", packet: "A01", attempt: 1, sha256: version("A01-a"), run: "r", pid: dead, host: hostname() }]);
    const { board } = await statusJson();
    expect(board.packets[0]).toMatchObject({ state: "running", note: expect.stringContaining("is gone; the next factory run recovers it") });
  });

  it("shows one packet's history, and refuses an unknown id", async () => {
    queue({ "A01-a": "" });
    const V: Record<string, string> = { A01: version("A01-a") };
    await appendEvents(repo.dir, [
      { kind: "claimed", packet: "A01", attempt: 1, sha256: V.A01!, run: "r", pid: 1, host: "h" },
      { kind: "gate-finished", packet: "A01", attempt: 1, gate: "pytest", result: "fail", durationMs: 10 },
      { kind: "decided", packet: "A01", attempt: 1, decision: "retry", reasons: ["gate pytest failed"] },
    ]);
    const output = bufferOutput();
    expect(await status({ cwd: repo.dir, id: "A01", json: false, output })).toBe(0);
    const text = output.stdout.join("\n");
    expect(text).toContain("reason: gate pytest failed");
    expect(text).toMatch(/claimed .*attempt=1/);
    expect(text).toMatch(/gate-finished .*gate=pytest result=fail/);
    expect(text).toMatch(/decided .*decision=retry/);
    const missing = bufferOutput();
    expect(await status({ cwd: repo.dir, id: "NOPE", json: false, output: missing })).toBe(2);
    expect(missing.stderr.join("")).toContain('no packet "NOPE"');
  });

  it("marks a packet whose file changed since its attempts as a new, unrun version", async () => {
    queue({ "A01-a": "" });
    await appendEvents(repo.dir, [
      { kind: "packet-registered", packet: "A01", sha256: "old", file: "packets/A01-a.toml" },
      { kind: "claimed", packet: "A01", attempt: 1, sha256: "old", run: "r", pid: 1, host: "h" },
      { kind: "blocked", packet: "A01", reason: "defective" },
    ]);
    const { board } = await statusJson();
    expect(board.packets[0]).toMatchObject({ state: "queued", attempts_used: 0, reason: "the packet file changed; the new version has not run" });
  });
});
