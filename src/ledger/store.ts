import { type FileHandle, link, mkdir, open, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import type lockfile from "proper-lockfile";
import { type EventBody, type LedgerEvent, stamp } from "./events.js";
import { type ChainBreak, chainHash, LEDGER_FILE, LedgerScanner, LineSplitter, SCAN_START, SNAPSHOT_FILE, STATE_DIR } from "./scan.js";
import { withStateLockAt } from "./state-lock.js";

export { type ChainBreak, chainHash, LEDGER_FILE, STATE_DIR };

export interface LedgerRead {
  events: LedgerEvent[];
  /** Lines that were skipped and why (a torn last line after a crash, a newer schema). */
  warnings: string[];
  /** Where the hash chain first breaks: a line edited, removed or written by something other than the factory. */
  broken?: ChainBreak;
}

export function ledgerPath(root: string): string {
  return join(root, STATE_DIR, LEDGER_FILE);
}

/**
 * Runs `action` while holding the ledger's exclusive lock. proper-lockfile
 * uses an atomic mkdir, which works across processes and on network file
 * systems, and treats a lock not refreshed for `stale` ms, or whose owner
 * process is gone, as abandoned (state-lock.ts).
 */
export function withLedgerLock<T>(root: string, action: () => Promise<T>): Promise<T> {
  return withStateLock(root, "ledger.lock", { retries: 200, minTimeout: 10, maxTimeout: 100, factor: 1.3 }, action);
}

/**
 * The landing lock: `approve`, `reject` and a run's landing exclude each
 * other, so two approvals of one packet merge it once, and a rejection never
 * races the landing of the same work. Held for a whole landing (a re-gate
 * included); a waiter waits as long as it takes. A holder that died on this
 * host leaves a lock that is taken over at once; elsewhere it goes stale in
 * seconds (the live holder keeps refreshing it).
 */
export function withLandLock<T>(root: string, action: () => Promise<T>): Promise<T> {
  return withStateLock(root, "land.lock", { forever: true, minTimeout: 50, maxTimeout: 500, factor: 1.5 }, action);
}

async function withStateLock<T>(root: string, file: string, retries: lockfile.LockOptions["retries"], action: () => Promise<T>): Promise<T> {
  const dir = join(root, STATE_DIR);
  await mkdir(dir, { recursive: true });
  // proper-lockfile keys its in-process bookkeeping by the locked path, so each lock names its own (it need not exist).
  return withStateLockAt(file === "ledger.lock" ? dir : join(dir, file), join(dir, file), retries, action);
}

/**
 * Appends events under the exclusive lock and fsyncs before returning, so the
 * step that depends on them runs only once they are on disk. A torn last line
 * (a crash mid-write) is closed with a newline first, so it stays one bad line
 * instead of swallowing the next event.
 */
export async function appendEvents(root: string, bodies: readonly EventBody[], now = new Date()): Promise<LedgerEvent[]> {
  const events = bodies.map((body) => stamp(body, now));
  await withLedgerLock(root, () => appendUnlocked(root, events));
  return events;
}

/**
 * Starts a new ledger with `bodies` (given the kept file's name), keeping the old file beside it under a
 * name of its own (never over another file), under the ledger's lock: a
 * reader sees the old ledger or the new one. The snapshot of the old one goes
 * too. Returns the kept file's path.
 */
export async function restartLedger(root: string, bodies: (kept: string) => readonly EventBody[], now = new Date()): Promise<string> {
  const name = `ledger.before-${now.toISOString().replace(/[:.]/g, "-")}.jsonl`;
  const kept = join(root, STATE_DIR, name);
  await withLedgerLock(root, async () => {
    await link(ledgerPath(root), kept); // fails if the name is taken: nothing is overwritten
    await unlink(ledgerPath(root));
    await rm(join(root, STATE_DIR, SNAPSHOT_FILE), { force: true });
    await appendUnlocked(
      root,
      bodies(name).map((body) => stamp(body, now)),
    );
  });
  return kept;
}

/** For callers that already hold the lock (claims, the run lock takeover). */
export async function appendUnlocked(root: string, events: readonly LedgerEvent[]): Promise<void> {
  const handle = await open(ledgerPath(root), "a+");
  try {
    const { size } = await handle.stat();
    const last = await lastLine(handle, size);
    const prefix = size > 0 && !last.endedWithNewline ? "\n" : "";
    // Each line names the hash of the line before it (DESIGN §12): an edited,
    // removed or foreign line breaks the chain, and status and run say where.
    const lines: string[] = [];
    let prev = chainHash(last.text);
    for (const event of events) {
      const line = JSON.stringify({ ...event, prev });
      lines.push(line);
      prev = chainHash(line);
    }
    const text = `${prefix + lines.join("\n")}\n`;
    await handle.appendFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The ledger's last non-empty line (possibly torn), read from the end in growing chunks. */
async function lastLine(handle: FileHandle, size: number): Promise<{ text: string; endedWithNewline: boolean }> {
  if (size === 0) return { text: "", endedWithNewline: true };
  for (let chunk = 64 * 1024; ; chunk *= 4) {
    const start = Math.max(0, size - chunk);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString("utf8");
    const endedWithNewline = text.endsWith("\n");
    const body = text.replace(/\n+$/, "");
    const cut = body.lastIndexOf("\n");
    if (cut >= 0 || start === 0) return { text: body.slice(cut + 1), endedWithNewline };
  }
}

/** Reads the whole ledger as a stream of chunks (never as one string), with every event. */
export async function readLedger(root: string): Promise<LedgerRead> {
  const events: LedgerEvent[] = [];
  const scanner = new LedgerScanner(SCAN_START, (event) => events.push(event));
  await scanFile(ledgerPath(root), scanner, 0);
  const broken = scanner.at.broken;
  return { events, warnings: [...scanner.warnings, ...scanner.tornWarnings], ...(broken ? { broken } : {}) };
}

/**
 * Feeds the ledger file from byte `from` on to `scanner`, a chunk at a time.
 * A missing file reads as empty.
 */
export async function scanFile(path: string, scanner: LedgerScanner, from: number): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    const splitter = new LineSplitter(scanner, from);
    // As large as what is left to read, up to 1 MiB, and not zeroed: only the bytes read are used.
    // Most reads are a few events since the last one (a 1 MiB zeroed buffer each cost more than the read).
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(1024 * 1024, (await handle.stat()).size - from)));
    for (let at = from; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      splitter.push(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
    splitter.end();
  } finally {
    await handle.close();
  }
}

/** Pure: the events of a ledger file's text, skipping (and naming) lines that cannot be read. */
export function parseLedger(text: string, where?: (number: number) => string): LedgerRead {
  const events: LedgerEvent[] = [];
  const scanner = new LedgerScanner(SCAN_START, (event) => events.push(event), where);
  const splitter = new LineSplitter(scanner, 0);
  splitter.push(Buffer.from(text, "utf8"));
  splitter.end();
  const broken = scanner.at.broken;
  return { events, warnings: [...scanner.warnings, ...scanner.tornWarnings], ...(broken ? { broken } : {}) };
}

/** The one-line report of a broken chain, with what to do; undefined when the chain holds. */
export function describeBreak(read: { broken?: ChainBreak; lost?: string }): string | undefined {
  if (read.lost) {
    return (
      `${read.lost}. Nothing more is decided on it: what landed is on the target with its Factory-Packet trailers, and ` +
      `the next \`factory run\` records those as merged (never attempts them again); \`factory ledger repair\` also rebuilds the ledger from what git proves`
    );
  }
  if (!read.broken) return undefined;
  return (
    `${read.broken.where ?? `${STATE_DIR}/${LEDGER_FILE}:${read.broken.line}`}: the ledger's hash chain breaks here: ${read.broken.reason}. ` +
    `Its history cannot be trusted from this line on: \`factory ledger verify\` shows what rests on it, and ` +
    `\`factory ledger repair\` starts a new ledger from what git proves (merged and held work), keeping this one beside it`
  );
}
