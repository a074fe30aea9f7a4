import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { approve } from "../../src/commands/approve.js";
import { ledgerRepair, ledgerVerify } from "../../src/commands/ledger.js";
import { status } from "../../src/commands/status.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
const honest = { write: { "src/double.js": DOUBLE_JS } };
const STATE = ".factory/state";
const LEDGER = `${STATE}/ledger.jsonl`;
/** A person scripting it; and an agent's pipe: no terminal, no --yes. */
const scripted = { yes: true, input: Readable.from([]) };
const piped = { yes: false, input: Object.assign(Readable.from([]), { isTTY: false }) };

async function verify(target: LoopRepo) {
  const output = bufferOutput();
  const code = await ledgerVerify({ cwd: target.dir, output });
  return { code, out: output.text() };
}

async function repair(target: LoopRepo, person = scripted, env: NodeJS.ProcessEnv = {}) {
  const output = bufferOutput();
  const code = await ledgerRepair({ cwd: target.dir, output, env, person });
  return { code, out: output.text() };
}

/** Edits the recorded cost of the first implementer call: the line after it no longer names its hash. */
function forgeCost(target: LoopRepo): number {
  const lines = target.read(LEDGER).trimEnd().split("\n");
  const at = lines.findIndex((line) => line.includes('"kind":"agent-finished"'));
  lines[at] = (lines[at] as string).replace(/"costUsd":[0-9.]+/, '"costUsd":0');
  writeFileSync(join(target.dir, LEDGER), `${lines.join("\n")}\n`);
  return at + 2; // 1-based, the line after the edited one
}

describe("factory ledger verify and repair", () => {
  it("names the first bad line and what rests on it, and repair starts a new ledger from what git proves: held work stays approvable, merged work stays merged", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    expect((await target.run()).out).toContain("P01#1 → awaiting_human");
    const breaksAt = forgeCost(target);

    const verified = await verify(target);
    expect(verified.code).toBe(1);
    expect(verified.out).toContain(`${LEDGER}:${breaksAt}: the hash chain breaks here: it does not name the hash of the line before it`);
    expect(verified.out).toMatch(/P01 +awaiting_human +lines? [0-9, –]+ +held for a person: refs\/factory\/held\/P01/);
    expect(verified.out).toContain("`factory ledger repair` starts a new ledger");
    // The same, as JSON for a script or a dashboard.
    const asJson = bufferOutput();
    expect(await ledgerVerify({ cwd: target.dir, output: asJson, json: true })).toBe(1);
    const reported = JSON.parse(asJson.stdout.join("\n")) as { holds: boolean; broken: { at: number; reason: string; packets: { id: string; ledger_says: string; git_proves: string }[] } };
    expect(reported.holds).toBe(false);
    expect(reported.broken.at).toBe(breaksAt);
    expect(reported.broken.reason).toContain("it does not name the hash of the line before it");
    expect(reported.broken.packets).toEqual([expect.objectContaining({ id: "P01", ledger_says: "awaiting_human", git_proves: expect.stringContaining("refs/factory/held/P01") })]);
    const broken = target.read(LEDGER);

    // Only a person, only on purpose: an agent and a pipe without --yes change nothing.
    const byAgent = await repair(target, scripted, { CLAUDECODE: "1" });
    expect(byAgent.code).toBe(2);
    expect(byAgent.out).toContain("factory ledger repair refused: it is run by an agent process");
    const unconfirmed = await repair(target, piped);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.out).toMatch(/P01 +awaiting_human \(1 attempt\(s\), \$[0-9.]+\) +awaiting_human/);
    expect(unconfirmed.out).toContain("factory ledger repair needs a person");
    expect(target.read(LEDGER)).toBe(broken);

    const repaired = await repair(target);
    expect(repaired.code).toBe(0);
    const kept = readdirSync(join(target.dir, STATE)).filter((name) => name.startsWith("ledger.before-"));
    expect(kept).toHaveLength(1);
    expect(repaired.out).toContain(`the old ledger is kept at ${STATE}/${kept[0]}`);
    expect(readFileSync(join(target.dir, STATE, kept[0] as string), "utf8")).toBe(broken);
    const again = await verify(target);
    expect(again.code).toBe(0);
    expect(again.out).toContain("the hash chain holds");
    expect(again.out).toContain(`the ledger before it is ${STATE}/${kept[0]}`);
    const holds = bufferOutput();
    expect(await ledgerVerify({ cwd: target.dir, output: holds, json: true })).toBe(0);
    expect(JSON.parse(holds.stdout.join("\n"))).toMatchObject({ holds: true, packets: 1, repaired: { before: `${STATE}/${kept[0]}` } });

    const shown = bufferOutput();
    expect(await status({ cwd: target.dir, id: undefined, json: false, output: shown })).toBe(0);
    expect(shown.text()).toMatch(/P01 +awaiting_human/);
    const approved = bufferOutput();
    expect(await approve({ cwd: target.dir, id: "P01", output: approved, signal: new AbortController().signal, env: {}, ...scripted })).toBe(0);
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);

    // Merged work: the chain broken again, the repair records it merged from its trailer, and a run does not redo it.
    const mergedBreak = forgeCost(target);
    const afterMerge = await verify(target);
    expect(afterMerge.out).toContain(`${LEDGER}:${mergedBreak}: the hash chain breaks here`);
    expect(afterMerge.out).toMatch(/P01 +merged +lines? [0-9, –]+ +merged: a Factory-Packet trailer at [0-9a-f]{10}/);
    expect((await repair(target)).code).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    const { out } = await target.run();
    expect(out).not.toContain("P01#");
    expect(target.subjects().filter((subject) => subject.includes("[P01]"))).toHaveLength(1);
  }, 90_000);

  it("leaves a whole ledger alone: verify says it holds, repair changes nothing", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    await target.run();
    const before = target.read(LEDGER);
    const verified = await verify(target);
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/the hash chain holds, lines 1–[0-9]+: 1 packet\(s\), 1 run\(s\)/);
    const repaired = await repair(target);
    expect(repaired.code).toBe(0);
    expect(repaired.out).toContain("there is nothing to repair");
    expect(target.read(LEDGER)).toBe(before);
    expect(readdirSync(join(target.dir, STATE)).some((name) => name.startsWith("ledger.before-"))).toBe(false);
    expect(existsSync(join(target.dir, LEDGER))).toBe(true);
  }, 60_000);
});
