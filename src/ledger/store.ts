import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { EVENT_KINDS, SCHEMA_VERSION, stamp, type EventBody, type LedgerEvent } from "./events.js";

export const STATE_DIR = ".factory/state";
export const LEDGER_FILE = "ledger.jsonl";

export interface LedgerRead {
  events: LedgerEvent[];
  /** Lines that were skipped and why (a torn last line after a crash, a newer schema). */
  warnings: string[];
}

export function ledgerPath(root: string): string {
  return join(root, STATE_DIR, LEDGER_FILE);
}

/**
 * Runs `action` while holding the ledger's exclusive lock. proper-lockfile
 * uses an atomic mkdir, which works across processes and on network file
 * systems, and treats a lock not refreshed for `stale` ms as abandoned.
 */
export async function withLedgerLock<T>(root: string, action: () => Promise<T>): Promise<T> {
  const dir = join(root, STATE_DIR);
  await mkdir(dir, { recursive: true });
  const release = await lockfile.lock(dir, {
    lockfilePath: join(dir, "ledger.lock"),
    realpath: false,
    stale: 10_000,
    retries: { retries: 200, minTimeout: 10, maxTimeout: 100, factor: 1.3 },
  });
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
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    const text = prefix + events.map((event) => JSON.stringify(event)).join("\n") + "\n";
    await handle.appendFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
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
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
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
    if (value.v > SCHEMA_VERSION) {
      warnings.push(`${where}: written by a newer factory (schema ${value.v}); it is ignored — upgrade factory`);
      return;
    }
    if (!EVENT_KINDS.includes(value.kind)) {
      warnings.push(`${where}: unknown event kind "${value.kind}"; it is ignored`);
      return;
    }
    events.push(value);
  });
  return { events, warnings };
}

function isEvent(value: unknown): value is LedgerEvent {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.v === "number" && typeof record.ts === "string" && typeof record.kind === "string";
}
