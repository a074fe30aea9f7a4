import { closeSync, readSync } from "node:fs";

/**
 * Text to be written out, in memory or still in the file it was kept in. A
 * kept view is read piece by piece into one reused buffer as it is written:
 * at 10,000 packets the board is 4.6 MB, and reading it whole into fresh
 * memory cost ~14 ms of the 300 ms `status` may take.
 */
export interface Text {
  readonly length: number;
  /** The bytes before `end` (all of them by default), in pieces: a piece is only valid until the next one is asked for. */
  pieces(end?: number): Generator<Uint8Array>;
  /** All of it in one buffer of its own. */
  bytes(): Buffer;
  /** Whether it ends with these bytes. */
  endsWith(suffix: Uint8Array): boolean;
  /** Lets go of its file, for a text that is not written out (idempotent; reading it whole or to the end lets go too). */
  close(): void;
}

/** Text already in memory. */
export function textOf(bytes: Buffer): Text {
  return {
    length: bytes.length,
    *pieces(end = bytes.length) {
      yield bytes.subarray(0, end);
    },
    bytes: () => bytes,
    endsWith: (suffix) => bytes.length >= suffix.length && bytes.subarray(bytes.length - suffix.length).equals(suffix),
    close: () => undefined,
  };
}

const PIECE = 256 * 1024;

/**
 * The bytes of the open file `fd` from `start` to `size` (its size when it
 * was opened: a file replaced by rename meanwhile is not this one). The text
 * owns `fd` from here on and closes it once read whole or closed.
 */
export function fileText(fd: number, start: number, size: number): Text {
  let open = true;
  const close = (): void => {
    if (open) closeSync(fd);
    open = false;
  };
  const readAt = (target: Buffer, at: number): number => {
    if (!open) throw new Error("the kept text was already read or closed");
    let filled = 0;
    while (filled < target.length) {
      const count = readSync(fd, target, filled, target.length - filled, at + filled);
      if (count === 0) throw new Error("the kept file ended early");
      filled += count;
    }
    return filled;
  };
  const length = size - start;
  return {
    length,
    *pieces(end = length) {
      try {
        const buffer = Buffer.allocUnsafeSlow(Math.min(PIECE, Math.max(end, 1)));
        for (let at = 0; at < end; at += buffer.length) {
          const piece = buffer.subarray(0, Math.min(buffer.length, end - at));
          readAt(piece, start + at);
          yield piece;
        }
      } finally {
        close();
      }
    },
    bytes() {
      try {
        const all = Buffer.allocUnsafe(length);
        readAt(all, start);
        return all;
      } finally {
        close();
      }
    },
    endsWith(suffix) {
      if (length < suffix.length) return false;
      const tail = Buffer.allocUnsafe(suffix.length);
      readAt(tail, size - suffix.length);
      return tail.equals(suffix);
    },
    close,
  };
}
