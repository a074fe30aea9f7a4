import { statfsSync } from "node:fs";
import { formatSize } from "./size.js";

/** Below this much free space, a failure is the machine's (a disk full), not the work's. */
export const MIN_FREE_BYTES = 8 * 1024 * 1024;

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
 * The first of `paths` whose filesystem has less than MIN_FREE_BYTES free for
 * this user, said as a person can act on it; undefined when every one has
 * room (or cannot be asked).
 */
export function lowSpace(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    let free: number;
    try {
      const stats = statfsSync(path);
      free = stats.bavail * stats.bsize;
    } catch {
      continue;
    }
    if (free < MIN_FREE_BYTES) return `the filesystem holding ${path} has ${formatSize(free)} free (the factory needs at least ${formatSize(MIN_FREE_BYTES)} there)`;
  }
  return undefined;
}
