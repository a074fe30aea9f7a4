import { parse, TomlError } from "smol-toml";
import type { Problem } from "../util/problem.js";

export type TomlTable = Record<string, unknown>;

export type TomlRead = { ok: true; table: TomlTable } | { ok: false; problem: Problem };

/**
 * Parses TOML text. `lineOffset` shifts reported lines, for TOML that starts
 * part-way into a file (Markdown front matter).
 */
export function readToml(source: string, file: string, lineOffset = 0): TomlRead {
  try {
    return { ok: true, table: parse(source) as TomlTable };
  } catch (error) {
    if (error instanceof TomlError) {
      const firstLine = error.message.split("\n")[0] ?? error.message;
      return {
        ok: false,
        problem: { file, line: error.line + lineOffset, message: `TOML syntax error: ${firstLine}` },
      };
    }
    throw error;
  }
}
