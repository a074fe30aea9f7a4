import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Problem } from "../util/problem.js";
import { fileText, type Text } from "./kept-text.js";

/**
 * The last board `status` printed and the last order `plan` printed, kept
 * beside the ledger (`.factory/state/board.*.cache`, `plan.*.cache`) as the
 * text they printed, one file per view (the JSON, the text, the text in
 * colour), under a key of everything they were built from: the queue (its
 * own cache key: packets/ at the tip, the config it is checked against, the
 * factory's code), the ledger's version, the branch and its tip (which fix
 * what git's trailers say landed), and the config's problems and the
 * working tree's warnings. Whether a running packet's owner still lives is
 * the one input that changes on its own: the owners the board asked about
 * are kept with their answers and asked again. Any difference builds the
 * view again. What is kept only shows: no command decides from it.
 */
export const BOARD_CACHE_FILES = {
  json: "board.json.cache",
  table: "board.table.cache",
  colorTable: "board.table-color.cache",
  planJson: "plan.json.cache",
  planText: "plan.text.cache",
  planColorText: "plan.text-color.cache",
} as const;
export type BoardView = keyof typeof BOARD_CACHE_FILES;
const STATE_DIR = ".factory/state";
const FORMAT = "factory-board-cache";

export interface BoardKeyInputs {
  queue: string;
  ledger: string;
  branch: string;
  tip: string;
  problems: readonly Problem[];
  warnings: readonly string[];
  /** This machine: an owner on another host is taken as alive. */
  host: string;
}

/** A running packet's owner the board asked about, and the answer. */
export interface OwnerCheck {
  pid: number;
  host: string;
  alive: boolean;
}

interface Header {
  format: typeof FORMAT;
  key: string;
  owners: OwnerCheck[];
  /** What the view needs beside its text (the table's warnings, for one). */
  note?: unknown;
}

/** A view to keep: its text, the owners its board asked about, and its note. */
export interface KeptView {
  text: Buffer;
  owners: OwnerCheck[];
  note: unknown;
}

/** A view as it was kept, its text still in the kept file (see kept-text.ts). */
export interface KeptRead {
  text: Text;
  owners: OwnerCheck[];
  note: unknown;
}

/** Pure: the key of a board built from these inputs. */
export function boardCacheKey(inputs: BoardKeyInputs): string {
  return createHash("sha256").update(JSON.stringify(inputs)).digest("hex");
}

function cachePath(root: string, view: BoardView): string {
  return join(root, STATE_DIR, BOARD_CACHE_FILES[view]);
}

/**
 * The view kept under `key`, if every owner its board asked about still gets
 * the same answer from `alive`; undefined otherwise (no file, another key, a
 * file that cannot be read). Only the header line is read here: the text is
 * read as it is written out, from the file as it was opened (a view kept
 * again meanwhile replaces the file by rename, not this one). The caller
 * writes the text out or closes it.
 */
export function readBoardCache(root: string, view: BoardView, key: string, alive: (owner: { pid: number; host: string }) => boolean): KeptRead | undefined {
  let fd: number;
  try {
    fd = openSync(cachePath(root, view), "r");
  } catch {
    return undefined;
  }
  let handed = false;
  try {
    const size = fstatSync(fd).size;
    const line = headerLine(fd, size);
    if (line === undefined) return undefined;
    const header = JSON.parse(line.toString("utf8")) as Header;
    if (header?.format !== FORMAT || header.key !== key || !Array.isArray(header.owners)) return undefined;
    if (header.owners.some((owner) => alive(owner) !== owner.alive)) return undefined;
    const text = fileText(fd, line.length + 1, size);
    if (view === "json" && !endsAsObject(text)) return undefined;
    handed = true; // the text closes the file from here on
    return { text, owners: header.owners, note: header.note };
  } catch {
    return undefined;
  } finally {
    if (!handed) closeSync(fd);
  }
}

/** The file's first line (without its newline), read in growing pieces; undefined when there is none. */
function headerLine(fd: number, size: number): Buffer | undefined {
  let read = Buffer.alloc(0);
  for (let want = 16 * 1024; read.length < size; want *= 2) {
    const more = Buffer.allocUnsafe(Math.min(want, size - read.length));
    const count = readSync(fd, more, 0, more.length, read.length);
    if (count === 0) return undefined;
    const from = read.length;
    read = Buffer.concat([read, more.subarray(0, count)]);
    const end = read.indexOf(NEWLINE, from);
    if (end >= 0) return read.subarray(0, end);
  }
  return undefined;
}

/**
 * Keeps a view's text under `key`, only where the factory keeps state
 * already; by rename, so a reader sees a whole file or the old one; best
 * effort (a state directory that cannot be written only costs the next
 * `status` its build).
 */
export function writeBoardCache(root: string, view: BoardView, key: string, kept: KeptView): void {
  const path = cachePath(root, view);
  if (!existsSync(dirname(path))) return;
  const header: Header = { format: FORMAT, key, owners: kept.owners, ...(kept.note !== undefined ? { note: kept.note } : {}) };
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), kept.text]));
    renameSync(temporary, path);
  } catch {
    rmSync(temporary, { force: true });
  }
}

const NEWLINE = 0x0a;
const OBJECT_END = Buffer.from("\n}");

/** Whether `text` ends as an object printed with an indent does: a line holding only its closing brace. */
function endsAsObject(text: Text): boolean {
  return text.length > OBJECT_END.length && text.endsWith(OBJECT_END);
}

/**
 * The bytes of `JSON.stringify({ ...board, run }, null, 2)` from those of
 * `JSON.stringify(board, null, 2)`, without parsing them, in pieces as they
 * are read (the board's, then the run's).
 */
export function withRunField(board: Text, run: unknown, more: Record<string, unknown> = {}): Generator<Uint8Array> {
  if (!endsAsObject(board)) throw new Error("not the text of a JSON object printed with an indent of 2");
  const fields = Object.entries({ run, ...more }).map(([key, field]) => `,\n  ${JSON.stringify(key)}: ${JSON.stringify(field, null, 2).replace(/\n/g, "\n  ")}`);
  return (function* () {
    yield* board.pieces(board.length - OBJECT_END.length);
    yield Buffer.from(`${fields.join("")}\n}`);
  })();
}
