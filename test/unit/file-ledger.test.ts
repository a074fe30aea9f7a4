import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventBody, eventPacket } from "../../src/ledger/events.js";
import { fileLedger, SNAPSHOT_AFTER_EVENTS, snapshotPath } from "../../src/ledger/file-ledger.js";
import { foldLedger, type LedgerState } from "../../src/ledger/fold.js";
import { LedgerScanner, LineSplitter } from "../../src/ledger/scan.js";
import { appendEvents, ledgerPath, readLedger } from "../../src/ledger/store.js";
import { packetLife } from "../helpers/ledger-events.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "factory-file-ledger-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const owner = { run: "r1", pid: 1, host: "h" };
/** Enough packets (six events each) for a fold long enough to leave a snapshot. */
const PACKETS = Math.ceil(SNAPSHOT_AFTER_EVENTS / 6) + 1;
const life = (packet: string): EventBody[] => packetLife(packet, owner);

/** The state as the whole file folds it, without the per-packet event lists. */
async function fullFold(): Promise<LedgerState> {
  const state = foldLedger((await readLedger(root)).events);
  for (const record of state.packets.values()) delete (record as { events?: unknown }).events;
  return state;
}

describe("file ledger", () => {
  it("folds incrementally to the same state as a fold of the whole file", async () => {
    const ledger = fileLedger(root);
    expect((await ledger.read()).state.packets.size).toBe(0);
    await ledger.append([{ kind: "run-started", options: {}, ...owner }, ...life("A")]);
    expect((await ledger.read()).state).toEqual(await fullFold());
    await ledger.append([...life("B"), { kind: "blocked", packet: "A", reason: "by hand" }]);
    // Another process appends too: this reader folds only what it has not seen.
    await appendEvents(root, [{ kind: "run-ended", run: "r1", outcome: "drained" }]);
    const view = await ledger.read();
    expect(view.state).toEqual(await fullFold());
    expect(view.state.packets.get("A")?.status).toEqual({ state: "blocked", reason: "by hand" });
    expect(view.state.costUsd).toBeCloseTo(0.5);
    expect(view.state.runs.get("r1")?.ended?.outcome).toBe("drained");
  });

  it("says, from then on, that the file it had read was deleted or replaced under it; a new reader and a file that only grew are not", async () => {
    const ledger = fileLedger(root);
    expect((await ledger.read()).lost).toBeUndefined(); // nothing read yet: an absent file is an empty ledger
    await ledger.append([{ kind: "run-started", options: {}, ...owner }, ...life("A")]);
    await appendEvents(root, life("B")); // another process appends: still the same history
    expect((await ledger.read()).lost).toBeUndefined();
    rmSync(ledgerPath(root));
    expect((await ledger.read()).lost).toMatch(/ledger\.jsonl was deleted or replaced while this process was using it/);
    await appendEvents(root, life("C")); // a new file: what this process acted on is still gone
    const later = await ledger.read();
    expect(later.lost).toMatch(/was deleted or replaced/);
    expect(later.state.packets.has("C")).toBe(true);
    expect((await fileLedger(root).read()).lost).toBeUndefined();

    const other = fileLedger(root);
    await other.read();
    writeFileSync(ledgerPath(root), readFileSync(ledgerPath(root), "utf8").slice(0, 10));
    expect((await other.read()).lost).toMatch(/was deleted, replaced or cut short/);
  });

  it("leaves a snapshot after a long fold, and a new process starts from it", async () => {
    const bodies = Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat();
    await appendEvents(root, bodies);
    expect((await fileLedger(root).read()).state).toEqual(await fullFold());
    expect(existsSync(snapshotPath(root))).toBe(true);

    // Proof that the snapshot is what a new process reads: a value planted in it comes back.
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    snapshot.costUsd = 1234;
    writeFileSync(snapshotPath(root), JSON.stringify(snapshot));
    await appendEvents(root, life("Z"));
    const view = await fileLedger(root).read();
    expect(view.state.costUsd).toBeCloseTo(1234.25); // the snapshot's total plus the events after it
    expect(view.state.packets.get("Z")?.status.state).toBe("merged");
  });

  it("ignores a snapshot that does not match the ledger and folds from the start", async () => {
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    await fileLedger(root).read();
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    snapshot.costUsd = 1234;
    writeFileSync(snapshotPath(root), JSON.stringify(snapshot));
    // The ledger is moved aside and a new one started: the snapshot's offset no longer holds its last line.
    rmSync(ledgerPath(root));
    await appendEvents(root, [...life("A"), ...life("B")]);
    const view = await fileLedger(root).read();
    expect(view.state).toEqual(await fullFold());
    expect(view.state.costUsd).toBeCloseTo(0.5);
    expect([...view.state.packets.keys()]).toEqual(["A", "B"]);
  });

  it("ignores a snapshot folded by another version of the fold", async () => {
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    await fileLedger(root).read();
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    writeFileSync(snapshotPath(root), JSON.stringify({ ...snapshot, fold: snapshot.fold + 1, costUsd: 1234 }));
    expect((await fileLedger(root).read()).state.costUsd).toBeCloseTo(PACKETS * 0.25);
  });

  it("folds past a snapshot whose state is not a snapshot's (edited by hand), instead of failing the read", async () => {
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    await fileLedger(root).read();
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    writeFileSync(snapshotPath(root), JSON.stringify({ ...snapshot, packets: "P0" }));
    expect((await fileLedger(root).read()).state).toEqual(await fullFold());
  });

  it("verify folds the whole file, trusting no snapshot, and replaces a forged one", async () => {
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    await fileLedger(root).read();
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    snapshot.packets[0].status = { state: "queued" }; // a forged state at a matching offset
    writeFileSync(snapshotPath(root), JSON.stringify(snapshot));
    expect((await fileLedger(root).read()).state.packets.get("P0")?.status.state).toBe("queued"); // a reader that trusts it is fooled
    const ledger = fileLedger(root);
    expect((await ledger.verify()).state.packets.get("P0")?.status.state).toBe("merged");
    expect((await fileLedger(root).read()).state.packets.get("P0")?.status.state).toBe("merged"); // the snapshot was rewritten
  });

  it("does not trust a snapshot once a line before its point was edited in place: a new reader finds the broken chain (issue 57 §5)", async () => {
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    expect((await fileLedger(root).read()).broken).toBeUndefined();
    expect(existsSync(snapshotPath(root))).toBe(true);
    // The same length, so every offset the snapshot knows still holds: only the bytes before its last line differ.
    const lines = readFileSync(ledgerPath(root), "utf8").trimEnd().split("\n");
    lines[8] = (lines[8] as string).replace('"costUsd":0.25', '"costUsd":0.01');
    writeFileSync(ledgerPath(root), `${lines.join("\n")}\n`);
    const view = await fileLedger(root).read();
    expect(view.broken).toMatchObject({ line: 10 });
    // Honest twin: appends after the snapshot leave it trusted (a value planted in it comes back).
    rmSync(ledgerPath(root));
    rmSync(snapshotPath(root));
    await appendEvents(root, Array.from({ length: PACKETS }, (_, at) => life(`P${at}`)).flat());
    await fileLedger(root).read();
    const snapshot = JSON.parse(readFileSync(snapshotPath(root), "utf8"));
    writeFileSync(snapshotPath(root), JSON.stringify({ ...snapshot, costUsd: 1234 }));
    await appendEvents(root, life("Z"));
    const after = await fileLedger(root).read();
    expect(after.broken).toBeUndefined();
    expect(after.state.costUsd).toBeCloseTo(1234.25);
  });

  it("reports an edit after the remembered point as a broken chain", async () => {
    const ledger = fileLedger(root);
    await ledger.append(life("A"));
    await ledger.read();
    await ledger.append(life("B"));
    const lines = readFileSync(ledgerPath(root), "utf8").trimEnd().split("\n");
    lines[8] = (lines[8] as string).replace('"costUsd":0.25', '"costUsd":0.01');
    writeFileSync(ledgerPath(root), `${lines.join("\n")}\n`);
    expect((await ledger.read()).broken).toMatchObject({ line: 10 });
  });

  it("survives a packet event without a packet id: a warning, never a crash, and the other packets fold", async () => {
    const ledger = fileLedger(root);
    await ledger.append(life("A"));
    appendFileSync(ledgerPath(root), `${JSON.stringify({ v: 1, ts: "2026-12-01T00:00:00Z", kind: "claimed", attempt: 1 })}\n`);
    await ledger.append(life("B"));
    const read = await ledger.read();
    expect(read.warnings).toEqual([expect.stringContaining(':7: a "claimed" event without a packet id; it is ignored')]);
    expect([...read.state.packets.keys()]).toEqual(["A", "B"]);
    expect(read.state.packets.get("B")?.status.state).toBe("merged");
  });

  it("shows a torn last line as a warning without remembering it, and goes on once it is closed", async () => {
    const ledger = fileLedger(root);
    await ledger.append(life("A"));
    appendFileSync(ledgerPath(root), '{"v":1,"ts":"2026');
    const torn = await ledger.read();
    expect(torn.warnings).toEqual([expect.stringContaining(":7: the last line was cut off mid-write")]);
    await ledger.append(life("B"));
    const after = await ledger.read();
    expect(after.warnings).toEqual([expect.stringContaining(":7: not a JSON event")]);
    expect(after.broken).toBeUndefined();
    expect(after.state.packets.get("B")?.status.state).toBe("merged");
    expect(after.state).toEqual(await fullFold());
  });

  it("names its version: the same for a read and for the file as it is, new after an append or an edit, none while a line is cut off", async () => {
    const ledger = fileLedger(root);
    expect(await ledger.version()).toBe((await ledger.read()).version); // no file yet
    expect(await ledger.version()).toBeDefined();
    await ledger.append(life("A"));
    const first = await ledger.read();
    expect(first.version).toBeDefined();
    expect(await ledger.version()).toBe(first.version);
    expect(await fileLedger(root).version()).toBe(first.version); // another process: from the file alone

    await ledger.append(life("B"));
    const second = await ledger.version();
    expect(second).not.toBe(first.version);
    expect((await ledger.read()).version).toBe(second);

    // An earlier line edited to the same length: the last line is the same, the file is not.
    const text = readFileSync(ledgerPath(root), "utf8");
    await new Promise((done) => setTimeout(done, 20)); // a later modification time than the append's
    writeFileSync(ledgerPath(root), text.replace('"costUsd":0.25', '"costUsd":0.26'));
    const edited = await ledger.version();
    expect(edited).not.toBe(second);
    expect((await ledger.read()).version).toBe(edited);

    appendFileSync(ledgerPath(root), '{"v":1,"ts":"2026');
    expect(await ledger.version()).toBeUndefined();
    expect((await ledger.read()).version).toBeUndefined();
  });

  it("reads a last line longer than one chunk of the tail for its version", async () => {
    const ledger = fileLedger(root);
    await ledger.append([{ kind: "blocked", packet: "A", reason: "x".repeat(200_000) }]);
    await ledger.append([{ kind: "blocked", packet: "A", reason: "y".repeat(150_000) }]);
    const view = await ledger.read();
    expect(view.version).toBeDefined();
    expect(await fileLedger(root).version()).toBe(view.version);
  });

  it("claims under the lock: a transaction reads and appends with nothing in between", async () => {
    const ledger = fileLedger(root);
    const seen: number[] = [];
    const claim = (packet: string) =>
      ledger.transaction(async (tx) => {
        seen.push((await tx.read()).state.packets.size);
        await new Promise((resolve) => setTimeout(resolve, 30));
        await tx.append(life(packet).map((body) => ({ ...body, v: 1, ts: new Date().toISOString() }) as never));
      });
    await Promise.all([
      claim("A"),
      fileLedger(root).transaction(async (tx) => {
        seen.push((await tx.read()).state.packets.size);
        await tx.append([{ kind: "reset", packet: "B", by: "t", v: 1, ts: new Date().toISOString() } as never]);
      }),
    ]);
    expect(seen.sort()).toEqual([0, 1]); // the second saw the first's append, whichever came first
    expect((await ledger.read()).broken).toBeUndefined();
  });

  it("gives each packet's history in order for the commands that show it", async () => {
    const ledger = fileLedger(root);
    await ledger.append([...life("A"), ...life("B")]);
    const history = await ledger.history();
    expect(history.state.packets.get("A")?.events.map((event) => event.kind)).toEqual(["packet-registered", "claimed", "agent-finished", "decided", "claimed", "merged"]);
  });
});

describe("reading the ledger as a stream", () => {
  it("keeps lines and byte offsets exact when a character straddles two chunks", () => {
    const lines: string[] = [];
    const scanner = new LedgerScanner(undefined, (event) => lines.push(eventPacket(event) ?? ""));
    const text = `${JSON.stringify({ v: 1, ts: "t", kind: "reset", packet: "Ä→😀", by: "x" })}\n${JSON.stringify({ v: 1, ts: "t", kind: "reset", packet: "B", by: "x" })}\n`;
    const bytes = Buffer.from(text, "utf8");
    const splitter = new LineSplitter(scanner, 0);
    for (let at = 0; at < bytes.length; at += 3) splitter.push(bytes.subarray(at, at + 3));
    splitter.end();
    expect(lines).toEqual(["Ä→😀", "B"]);
    expect(scanner.complete.offset).toBe(bytes.length);
  });
});
