import { type Dirent, readdirSync } from "node:fs";

/** The entries of a directory, or none when it cannot be read (gone, not a directory, no permission). */
export function dirEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
