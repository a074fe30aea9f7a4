import { createHash } from "node:crypto";
import { mkdir, open, readFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { EVENT_KINDS, SCHEMA_VERSION, stamp, type EventBody, type LedgerEvent } from "./events.js";

export const STATE_DIR = ".factory/state";
export const LEDGER_FILE = "ledger.jsonl";

export interface LedgerRead {
  events: LedgerEvent[];
  /** Lines that were skipped and why (a torn last line after a crash, a newer schema). */
  warnings: string[];
  /** Where the hash chain first breaks: a line edited, removed or written by something other than the factory. */
  broken?: ChainBreak;
}

export interface ChainBreak {
  line: number;
  reason: string;
}

export function ledgerPath(root: string): string {
  return join(root, STATE_DIR, LEDGER_FILE);
}

/**
 * Runs `action` while holding the ledger's exclusive lock. proper-lockfile
 * uses an atomic mkdir, which works across processes and on network file
 * systems, and treats a lock not refreshed for `stale` ms as abandoned.
 */
export function withLedgerLock<T>(root: string, action: () => Promise<T>): Promise<T> {
  return withStateLock(root, "ledger.lock", { retries: 200, minTimeout: 10, maxTimeout: 100, factor: 1.3 }, action);
}

/**
 * The landing lock: `approve`, `reject` and a run's landing exclude each
 * other, so two approvals of one packet merge it once, and a rejection never
 * races the landing of the same work. Held for a whole landing (a re-gate
 * included); a waiter waits as long as it takes. A holder that died leaves a
 * lock that goes stale in seconds (the live holder keeps refreshing it).
 */
export function withLandLock<T>(root: string, action: () => Promise<T>): Promise<T> {
  return withStateLock(root, "land.lock", { forever: true, minTimeout: 50, maxTimeout: 500, factor: 1.5 }, action);
}

async function withStateLock<T>(root: string, file: string, retries: lockfile.LockOptions["retries"], action: () => Promise<T>): Promise<T> {
  const dir = join(root, STATE_DIR);
  await mkdir(dir, { recursive: true });
  // proper-lockfile keys its in-process bookkeeping by the locked path, so each lock names its own (it need not exist).
  const release = await lockfile.lock(file === "ledger.lock" ? dir : join(dir, file), { lockfilePath: join(dir, file), realpath: false, stale: 10_000, retries });
  try {
    return await action();
  } finally {
    await release();
  }
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
    const text = prefix + lines.join("\n") + "\n";
    await handle.appendFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The hash a line's successor names: sha256 of the line's exact text; "" for the start of the ledger. */
export function chainHash(line: string): string {
  return line === "" ? "" : createHash("sha256").update(line).digest("hex");
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

export async function readLedger(root: string): Promise<LedgerRead> {
  let text: string;
  try {
    text = await readFile(ledgerPath(root), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { events: [], warnings: [] };
    throw error;
  }
  return parseLedger(text);
}

/** Pure: the events of a ledger file's text, skipping (and naming) lines that cannot be read. */
export function parseLedger(text: string): LedgerRead {
  const events: LedgerEvent[] = [];
  const warnings: string[] = [];
  const lines = text.split("\n");
  const lastIndex = text.endsWith("\n") ? lines.length - 2 : lines.length - 1;
  let broken: ChainBreak | undefined;
  let chained = false;
  let previous = "";
  lines.forEach((line, index) => {
    if (line === "") return;
    const expected = chainHash(previous);
    previous = line;
    const where = `${STATE_DIR}/${LEDGER_FILE}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      const torn = index === lastIndex && !text.endsWith("\n");
      warnings.push(
        torn
          ? `${where}: the last line was cut off mid-write (a crash?); it is ignored`
          : `${where}: not a JSON event (an earlier write was cut off?); it is ignored`,
      );
      return;
    }
    if (!isEvent(value)) {
      warnings.push(`${where}: not a ledger event; it is ignored`);
      return;
    }
    // Lines before the first chained one were written by a factory before the chain existed.
    const link = (value as { prev?: unknown }).prev;
    if (typeof link === "string") chained = true;
    if (!broken && chained && link !== expected) {
      broken = {
        line: index + 1,
        reason: typeof link === "string"
          ? "it does not name the hash of the line before it (a line was edited, removed or inserted here)"
          : "it carries no link to the line before it (it was not written by the factory)",
      };
    }
    if (value.v > SCHEMA_VERSION) {
      warnings.push(`${where}: written by a newer factory (schema ${value.v}); it is ignored — upgrade factory`);
      return;
    }
    if (!EVENT_KINDS.includes(value.kind)) {
      warnings.push(`${where}: unknown event kind "${value.kind}"; it is ignored`);
      return;
    }
    const { prev: _prev, ...event } = value as LedgerEvent & { prev?: string };
    events.push(event as LedgerEvent);
  });
  return { events, warnings, ...(broken ? { broken } : {}) };
}

function isEvent(value: unknown): value is LedgerEvent {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.v === "number" && typeof record.ts === "string" && typeof record.kind === "string";
}

/** The one-line report of a broken chain, with what to do; undefined when the chain holds. */
export function describeBreak(read: LedgerRead): string | undefined {
  if (!read.broken) return undefined;
  return `${STATE_DIR}/${LEDGER_FILE}:${read.broken.line}: the ledger's hash chain breaks here: ${read.broken.reason}. ` +
    `Its history cannot be trusted from this line on. Inspect it; to start a fresh ledger, move it aside ` +
    `(what merged is recovered from the Factory-Packet trailers on the target branch)`;
}
