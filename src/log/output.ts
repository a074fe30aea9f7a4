import { randomBytes } from "node:crypto";
import { terminalInert } from "../util/inert-text.js";

/** Where a command writes: injected, so tests capture exactly what a user would see. */
export interface Output {
  out(text: string): void;
  /**
   * Like `out`, for text already encoded as UTF-8, given in pieces that may
   * share one buffer: each piece is written out before the next is asked for
   * (a large text need not be decoded, joined or held whole only to be
   * written again).
   */
  outPieces(pieces: Iterable<Uint8Array>): Promise<void>;
  err(text: string): void;
  /** Colors follow NO_COLOR and TTY detection. */
  color: boolean;
  isTty: boolean;
  /** Writes to stdout as given (no newline added): for redrawn lines on a terminal. */
  raw?: (text: string) => void;
}

export function processOutput(): Output {
  const isTty = Boolean(process.stdout.isTTY);
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "";
  const color = isTty && !noColor;
  return {
    out: (text) => void process.stdout.write(shown(text.endsWith("\n") ? text : `${text}\n`, color)),
    outPieces: async (pieces) => {
      let last: number | undefined;
      for (const piece of pieces) {
        if (piece.length === 0) continue;
        last = piece[piece.length - 1];
        // Handed to the system before the buffer is reused for the next piece; a closed stdout ends the text.
        const written = await new Promise<boolean>((settle) => process.stdout.write(piece, (error) => settle(!error)));
        if (!written) return;
      }
      if (last !== 0x0a) process.stdout.write("\n");
    },
    err: (text) => void process.stderr.write(shown(text.endsWith("\n") ? text : `${text}\n`, color)),
    color,
    isTty,
    raw: (text) => void process.stdout.write(text),
  };
}

/**
 * A colour is asked for with a mark only this process knows (a random nonce, never in an agent's text), so
 * what reaches the terminal acts only where the factory painted: everything else is terminalInert.
 */
const NONCE = randomBytes(8).toString("hex");
const MARK = new RegExp(`\u0000${NONCE}:(\\d+)\u0000`);

/** Pure: text as the terminal gets it: the factory's colour marks as SGR codes (or nothing, without colour), the rest inert. */
export function shown(text: string, color: boolean): string {
  const parts = text.split(MARK);
  return parts.map((part, index) => (index % 2 === 0 ? terminalInert(part) : color ? `\u001b[${part}m` : "")).join("");
}

/** The factory's colour marks, for measuring text that holds them (a table's cells): they take no column. */
export const COLOR_MARK = new RegExp(`\u0000${NONCE}:\\d+\u0000`, "g");

export function bufferOutput(): Output & { stdout: string[]; stderr: string[]; text(): string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (text) => void stdout.push(shown(text, false)),
    outPieces: async (pieces) => void stdout.push(joined(pieces).toString("utf8")),
    err: (text) => void stderr.push(shown(text, false)),
    color: false,
    isTty: false,
    text: () => [...stdout, ...stderr].join("\n"),
  };
}

/** Pieces that may share one buffer, copied one by one into one buffer. */
export function joined(pieces: Iterable<Uint8Array>): Buffer {
  return Buffer.concat(Array.from(pieces, (piece) => Buffer.from(piece)));
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, dim: 2, bold: 1 } as const;
export type Color = keyof typeof CODES;

export function paint(output: Output, color: Color, text: string): string {
  return output.color ? `\u0000${NONCE}:${CODES[color]}\u0000${text}\u0000${NONCE}:0\u0000` : text;
}
