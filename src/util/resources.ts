import { statfsSync } from "node:fs";
import { formatSize } from "./size.js";

/** Below this much free space (or a twentieth of a smaller filesystem), a failure is the disk's, not the work's. */
export const MIN_FREE_BYTES = 8 * 1024 * 1024;

/** Pure: the least free space a filesystem of `totalBytes` must keep: MIN_FREE_BYTES, or a twentieth of a small one. */
export function minFreeBytes(totalBytes: number): number {
  return Math.min(MIN_FREE_BYTES, Math.floor(totalBytes / 20));
}

/** Free bytes for this user on the filesystem holding `path`, and its size; undefined when it cannot be asked. */
export function freeSpace(path: string): { free: number; total: number } | undefined {
  try {
    const stats = statfsSync(path);
    return { free: stats.bavail * stats.bsize, total: stats.blocks * stats.bsize };
  } catch {
    return undefined;
  }
}

const CODES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  EMFILE: "too many open files",
  ENFILE: "too many open files on the system",
  ENOMEM: "out of memory",
};
const MESSAGES: [RegExp, string][] = [
  [/No space left on device/i, CODES.ENOSPC as string],
  [/Disk quota exceeded/i, CODES.EDQUOT as string],
  [/Too many open files/i, CODES.EMFILE as string],
  [/Cannot allocate memory|Out of memory/i, CODES.ENOMEM as string],
];

/** Pure: the machine's resource that an error says ran out (ENOSPC, EDQUOT, EMFILE, ENOMEM), if any. */
export function resourceFault(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && CODES[code]) return CODES[code];
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  return MESSAGES.find(([pattern]) => pattern.test(message))?.[1];
}

/**
 * Pure: the line of an error that says what ran out, as the program that failed said it (`fatal: unable to
 * write loose object file: No space left on device`), not the command line it ran; else the error's first line.
 */
export function resourceLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split("\n");
  const line = lines.find((candidate) => MESSAGES.some(([pattern]) => pattern.test(candidate))) ?? lines[0] ?? "";
  const said = line.search(/\b(?:fatal|error): /);
  return (said > 0 ? line.slice(said) : line).trim();
}

/**
 * The first of `paths` whose filesystem has less than MIN_FREE_BYTES free for
 * this user, said as a person can act on it; undefined when every one has
 * room (or cannot be asked).
 */
export function lowSpace(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    const space = freeSpace(path);
    if (!space) continue;
    const needed = minFreeBytes(space.total);
    if (space.free < needed) return `the filesystem holding ${path} has ${formatSize(space.free)} free (the factory needs at least ${formatSize(needed)} there)`;
  }
  return undefined;
}
