import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvents, chainHash, describeBreak, ledgerPath, parseLedger, readLedger, STATE_DIR, withLedgerLock } from "../../src/ledger/store.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "factory-ledger-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const reset = (packet: string) => ({ kind: "reset" as const, packet, by: "test" });

describe("ledger store", () => {
  it("appends schema-versioned, timestamped events and reads them back in order", async () => {
    await appendEvents(root, [reset("A"), reset("B")]);
    await appendEvents(root, [reset("C")]);
    const read = await readLedger(root);
    expect(read.warnings).toEqual([]);
    expect(read.events.map((e) => [e.v, e.kind, "packet" in e ? e.packet : ""])).toEqual([
      [1, "reset", "A"],
      [1, "reset", "B"],
      [1, "reset", "C"],
    ]);
    expect(read.events[0]?.ts).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("reads a missing ledger as empty", async () => {
    expect(await readLedger(root)).toEqual({ events: [], warnings: [] });
  });

  it("reports and ignores a torn last line, and the next append stays intact", async () => {
    await appendEvents(root, [reset("A")]);
    appendFileSync(ledgerPath(root), '{"v":1,"ts":"2026-01-01T00:00:00Z","kind":"res');
    const torn = await readLedger(root);
    expect(torn.events).toHaveLength(1);
    expect(torn.warnings).toEqual([`${STATE_DIR}/ledger.jsonl:2: the last line was cut off mid-write (a crash?); it is ignored`]);

    await appendEvents(root, [reset("B")]);
    const after = await readLedger(root);
    expect(after.events.map((e) => ("packet" in e ? e.packet : ""))).toEqual(["A", "B"]);
    expect(after.warnings).toEqual([expect.stringContaining(":2: not a JSON event")]);
    expect(readFileSync(ledgerPath(root), "utf8").endsWith("\n")).toBe(true);
  });

  it("skips events from a newer schema and unknown kinds, naming the line", () => {
    const text = [
      JSON.stringify({ v: 99, ts: "t", kind: "reset", packet: "A", by: "x" }),
      JSON.stringify({ v: 1, ts: "t", kind: "teleported", packet: "A" }),
      JSON.stringify({ hello: 1 }),
      JSON.stringify({ v: 1, ts: "t", kind: "reset", packet: "B", by: "x" }),
      "",
    ].join("\n");
    const read = parseLedger(text);
    expect(read.events).toHaveLength(1);
    expect(read.warnings.map((w) => w.split(": ")[0]?.split(":").pop())).toEqual(["1", "2", "3"]);
  });

  it("lets one lock holder in at a time", async () => {
    const spans: [number, number][] = [];
    const hold = (ms: number) =>
      withLedgerLock(root, async () => {
        const start = Date.now();
        await new Promise((resolve) => setTimeout(resolve, ms));
        spans.push([start, Date.now()]);
      });
    await Promise.all([hold(150), hold(150), hold(150)]);
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
  });

  it("keeps every line whole when several processes append at once", async () => {
    mkdirSync(join(root, STATE_DIR), { recursive: true });
    // Node 20 cannot load TypeScript, so the writers use the build (`npm test` builds first).
    const storeModule = new URL("../../dist/ledger/store.js", import.meta.url).href;
    const script = `
      const { appendEvents } = await import(${JSON.stringify(storeModule)});
      for (let i = 0; i < 25; i++) await appendEvents(process.argv[1], [{ kind: "reset", packet: "P" + process.argv[2] + "-" + i, by: "x".repeat(3000) }]);
    `;
    const writers = [0, 1, 2, 3].map(
      (n) =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, ["--input-type=module", "-e", script, root, String(n)], { stdio: "inherit" });
          child.on("error", reject);
          child.on("exit", (code) => resolve(code ?? -1));
        }),
    );
    expect(await Promise.all(writers)).toEqual([0, 0, 0, 0]);
    const read = await readLedger(root);
    expect(read.warnings).toEqual([]);
    expect(read.events).toHaveLength(100);
    expect(read.broken).toBeUndefined(); // concurrent appenders keep one chain
  }, 60_000);
});

describe("the ledger's hash chain", () => {
  const lines = () => readFileSync(ledgerPath(root), "utf8").trimEnd().split("\n");
  const write = (text: string[]) => writeFileSync(ledgerPath(root), `${text.join("\n")}\n`);

  it("holds over appends, and each line names the hash of the one before it", async () => {
    await appendEvents(root, [reset("A"), reset("B")]);
    await appendEvents(root, [reset("C")]);
    const read = await readLedger(root);
    expect(read.broken).toBeUndefined();
    const [first, second] = lines();
    expect(JSON.parse(first ?? "").prev).toBe("");
    expect(JSON.parse(second ?? "").prev).toBe(chainHash(first ?? ""));
    expect(read.events[0]).not.toHaveProperty("prev");
  });

  it("breaks at an edited line, naming the line after it", async () => {
    await appendEvents(root, [reset("A"), reset("B"), reset("C")]);
    const text = lines();
    text[1] = (text[1] ?? "").replace('"B"', '"X"');
    write(text);
    expect((await readLedger(root)).broken).toMatchObject({ line: 3 });
  });

  it("breaks at a removed line and at a line appended by something else (a forged merge-blocked)", async () => {
    await appendEvents(root, [reset("A"), reset("B"), reset("C")]);
    const text = lines();
    write([text[0] ?? "", text[2] ?? ""]);
    expect((await readLedger(root)).broken).toMatchObject({ line: 2 });

    rmSync(ledgerPath(root));
    await appendEvents(root, [reset("A")]);
    appendFileSync(ledgerPath(root), `${JSON.stringify({ v: 1, ts: "t", kind: "merge-blocked", packet: "A", attempt: 1, reason: "r", commit: "c", fork: "f" })}\n`);
    const read = await readLedger(root);
    expect(read.broken).toMatchObject({ line: 2, reason: expect.stringContaining("not written by the factory") });
    expect(describeBreak(read)).toMatch(/ledger\.jsonl:2: the ledger's hash chain breaks here/);
  });

  it("accepts lines written before the chain existed, and a torn line a crash left", async () => {
    mkdirSync(join(root, STATE_DIR), { recursive: true });
    write([JSON.stringify({ v: 1, ts: "t", kind: "reset", packet: "OLD", by: "x" })]);
    await appendEvents(root, [reset("A")]);
    appendFileSync(ledgerPath(root), '{"v":1,"ts":"t","kind":"res');
    await appendEvents(root, [reset("B")]);
    const read = await readLedger(root);
    expect(read.broken).toBeUndefined();
    expect(read.events.map((e) => ("packet" in e ? e.packet : ""))).toEqual(["OLD", "A", "B"]);
  });
});
