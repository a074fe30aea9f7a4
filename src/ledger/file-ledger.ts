import { createHash } from "node:crypto";
import { type FileHandle, open, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { type EventBody, type LedgerEvent, stamp } from "./events.js";
import { emptyState, foldInto, type LedgerState, type PacketHistory } from "./fold.js";
import type { Ledger, LedgerView } from "./ledger.js";
import { chainHash, LEDGER_FILE, LedgerScanner, SCAN_START, type ScanPosition, SNAPSHOT_FILE, STATE_DIR } from "./scan.js";
import { FOLD_VERSION, isSavedState, loadSnapshotFile, restoredState, type SavedState, SNAPSHOT_AFTER_EVENTS, savedState, saveSnapshotFile } from "./snapshot.js";
import { appendUnlocked, ledgerPath, scanFile, withLedgerLock } from "./store.js";

export { FOLD_VERSION, SNAPSHOT_AFTER_EVENTS, SNAPSHOT_FILE };

/** A fold up to a point of the file: its state and the warnings of the lines it covers. */
interface Checkpoint {
  position: ScanPosition;
  state: LedgerState;
  warnings: string[];
}

interface SnapshotFile extends SavedState {
  format: "factory-ledger-snapshot";
  fold: number;
  position: ScanPosition;
  warnings: string[];
  /**
   * sha256 of the ledger's bytes before `position.offset`: a line edited in place before the snapshot's last one
   * (its chain broken, but not where the snapshot looks) makes the snapshot untrusted, and the fold from the start
   * finds the break.
   */
  prefixSha256?: string;
}

export function snapshotPath(root: string): string {
  return join(root, STATE_DIR, SNAPSHOT_FILE);
}

/**
 * The ledger as an append-only JSONL file under `.factory/state/`, read as a
 * stream and folded incrementally: a process remembers how far it has
 * folded, and a snapshot beside the file (state, byte offset, the hash of
 * the last line it covers and the sha256 of every byte before its offset)
 * lets a new process start there. A snapshot or memory that no longer
 * matches the file (the bytes at its offset hash differently, the file is
 * shorter) is dropped and the file folded from the start.
 */
export function fileLedger(root: string): Ledger {
  let memory: Checkpoint | undefined;
  // Once the file this process folded is gone or replaced, every later view says so (see LedgerView.lost).
  let lost: string | undefined;
  const noteLost = (how: string): void => {
    lost ??= `${STATE_DIR}/${LEDGER_FILE} was ${how} while this process was using it (it had read ${memory?.position.offset ?? 0} bytes of events): what it shows now is not the history this run acted on`;
  };

  const read = async (trustSnapshot = true): Promise<LedgerView> => {
    const path = ledgerPath(root);
    let size: number;
    let mtimeMs: number;
    try {
      ({ size, mtimeMs } = await stat(path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      if (memory && memory.position.offset > 0) noteLost("deleted or replaced");
      memory = undefined;
      return { state: emptyState(), warnings: [], version: ABSENT, ...(lost ? { lost } : {}) };
    }
    let base = memory && (await matches(path, memory.position, size)) ? memory : undefined;
    if (memory && memory.position.offset > 0 && !base) noteLost("deleted, replaced or cut short");
    if (!base && trustSnapshot) {
      const saved = await loadSnapshot(root);
      base = saved && (await matches(path, saved.position, size)) && saved.prefixSha256 !== undefined && (await prefixSha256(path, saved.position.offset)) === saved.prefixSha256 ? saved : undefined;
    }
    base ??= { position: SCAN_START, state: emptyState(), warnings: [] };
    const { checkpoint, folded, torn } = await foldTail(path, base);
    memory = checkpoint;
    if (folded >= SNAPSHOT_AFTER_EVENTS || (!trustSnapshot && folded > 0)) await saveSnapshot(root, checkpoint);
    let state = checkpoint.state;
    if (torn.events.length > 0) state = foldInto(structuredClone(state), torn.events);
    const broken = torn.broken ?? checkpoint.position.broken;
    // Named only when the fold ends where the file did when it was measured: no line cut off, none appended meanwhile.
    const version = checkpoint.position.offset === size && torn.events.length === 0 && torn.warnings.length === 0 ? versionOf(size, mtimeMs, checkpoint.position.lastHash) : undefined;
    return { state, warnings: [...checkpoint.warnings, ...torn.warnings], ...(broken ? { broken } : {}), ...(version ? { version } : {}), ...(lost ? { lost } : {}) };
  };

  return {
    async append(bodies: readonly EventBody[]): Promise<LedgerEvent[]> {
      const events = bodies.map((body) => stamp(body));
      await withLedgerLock(root, () => appendUnlocked(root, events));
      return events;
    },
    read: () => read(),
    verify: () => {
      memory = undefined;
      return read(false);
    },
    async history(): Promise<LedgerView<PacketHistory>> {
      const events: LedgerEvent[] = [];
      const scanner = new LedgerScanner(SCAN_START, (event) => events.push(event));
      await scanFile(ledgerPath(root), scanner, 0);
      const state = foldInto(emptyState(), events, true) as LedgerState<PacketHistory>;
      const broken = scanner.at.broken;
      return { state, warnings: [...scanner.warnings, ...scanner.tornWarnings], ...(broken ? { broken } : {}) };
    },
    version: () => fileVersion(ledgerPath(root)),
    transaction(action) {
      return withLedgerLock(root, () => action({ read: () => read(), append: (events) => appendUnlocked(root, events) }));
    },
    where: `${STATE_DIR}/${LEDGER_FILE}`,
    async lines() {
      try {
        return (await readFile(ledgerPath(root), "utf8")).split("\n").filter((line, at, all) => line !== "" || at < all.length - 1);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
    },
    importLines(lines) {
      return withLedgerLock(root, async () => {
        const size = await stat(ledgerPath(root)).then(
          (found) => found.size,
          () => 0,
        );
        if (size > 0) return { ok: false as const, reason: `${STATE_DIR}/${LEDGER_FILE} already holds events; import only into an empty ledger` };
        const handle = await open(ledgerPath(root), "w");
        try {
          await handle.writeFile(lines.map((line) => `${line}\n`).join(""), "utf8");
          await handle.sync();
        } finally {
          await handle.close();
        }
        memory = undefined;
        return { ok: true as const };
      });
    },
  };
}

/**
 * Folds the file from the checkpoint on. The state of the checkpoint is not
 * changed (a caller may still hold it). A last line without its newline (a
 * write cut off, or one still under way) is folded into the view but not
 * into the new checkpoint, which ends at the last complete line.
 */
async function foldTail(
  path: string,
  base: Checkpoint,
): Promise<{
  checkpoint: Checkpoint;
  folded: number;
  torn: { events: LedgerEvent[]; warnings: string[]; broken?: ScanPosition["broken"] };
}> {
  const events: LedgerEvent[] = [];
  let tornEvent: LedgerEvent | undefined;
  const scanner = new LedgerScanner(base.position, (event, complete) => {
    if (complete) events.push(event);
    else tornEvent = event;
  });
  await scanFile(path, scanner, base.position.offset);
  const position = scanner.complete;
  const state = events.length > 0 ? foldInto(structuredClone(base.state), events) : base.state;
  const warnings = scanner.warnings.length > 0 ? [...base.warnings, ...scanner.warnings] : base.warnings;
  const broken = scanner.at.broken;
  return {
    checkpoint: { position, state, warnings },
    folded: events.length,
    torn: { events: tornEvent ? [tornEvent] : [], warnings: scanner.tornWarnings, ...(broken && !position.broken ? { broken } : {}) },
  };
}

/** The version of a ledger that does not exist yet. */
const ABSENT = "absent";

/** Pure: a ledger file's version: its size and modification time, and the hash of its last line (which the chain ties to every line before it). */
function versionOf(size: number, mtimeMs: number, lastHash: string): string {
  return `${size}:${mtimeMs}:${lastHash}`;
}

/** The version of the file as it is now, reading only its last line; undefined when it does not end with a newline. */
async function fileVersion(path: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return ABSENT;
    throw error;
  }
  try {
    const { size, mtimeMs } = await handle.stat();
    if (size === 0) return versionOf(0, mtimeMs, "");
    let tail = Buffer.alloc(0);
    let start = size;
    // Back from the end, a chunk at a time, until the newline before the last line.
    while (start > 0) {
      const length = Math.min(TAIL_CHUNK, start);
      start -= length;
      const chunk = Buffer.alloc(length);
      const { bytesRead } = await handle.read(chunk, 0, length, start);
      if (bytesRead !== length) return undefined;
      tail = Buffer.concat([chunk, tail]);
      if (tail.at(-1) !== 0x0a) return undefined;
      if (tail.length >= 2 && tail.lastIndexOf(0x0a, tail.length - 2) >= 0) break;
    }
    const lineStart = tail.length >= 2 ? tail.lastIndexOf(0x0a, tail.length - 2) + 1 : 1;
    return versionOf(size, mtimeMs, chainHash(tail.subarray(lineStart, tail.length - 1).toString("utf8")));
  } finally {
    await handle.close();
  }
}

const TAIL_CHUNK = 64 * 1024;

/** Whether the file still holds, at the checkpoint's offset, the line the checkpoint ended on. */
async function matches(path: string, position: ScanPosition, size: number): Promise<boolean> {
  if (position.offset === 0) return true;
  if (position.offset > size || position.lastLineStart >= position.offset) return false;
  const handle = await open(path, "r");
  try {
    const length = position.offset - position.lastLineStart;
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position.lastLineStart);
    if (bytesRead !== length || buffer[length - 1] !== 0x0a) return false;
    return chainHash(buffer.subarray(0, length - 1).toString("utf8")) === position.lastHash;
  } finally {
    await handle.close();
  }
}

/** sha256 of a file's first `length` bytes, read in 1 MB pieces (a stream's 64 KB ones cost three times as long on a 5 MB ledger). */
async function prefixSha256(path: string, length: number): Promise<string> {
  const hash = createHash("sha256");
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(Math.min(Math.max(length, 1), PREFIX_PIECE));
    for (let at = 0; at < length; ) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, length - at), at);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}
const PREFIX_PIECE = 1024 * 1024;

async function loadSnapshot(root: string): Promise<(Checkpoint & Pick<SnapshotFile, "prefixSha256">) | undefined> {
  const value = (await loadSnapshotFile(snapshotPath(root))) as SnapshotFile | undefined;
  if (value?.format !== "factory-ledger-snapshot" || value.fold !== FOLD_VERSION || typeof value.position?.offset !== "number" || !isSavedState(value)) return undefined;
  return { position: value.position, prefixSha256: value.prefixSha256, warnings: value.warnings, state: restoredState(value) };
}

/** Written beside the ledger, whole or not at all. */
async function saveSnapshot(root: string, checkpoint: Checkpoint): Promise<void> {
  const value: SnapshotFile = {
    format: "factory-ledger-snapshot",
    fold: FOLD_VERSION,
    position: checkpoint.position,
    warnings: checkpoint.warnings,
    ...savedState(checkpoint.state),
    prefixSha256: await prefixSha256(ledgerPath(root), checkpoint.position.offset),
  };
  await saveSnapshotFile(snapshotPath(root), value);
}
