import type { Problem } from "../util/problem.js";
import { formatKeyPath, type KeyPath, locateKey } from "./locate.js";
import type { TomlTable } from "./read.js";

/** Where a table came from, so that every problem can name file, line and key. */
export interface SourceContext {
  file: string;
  source: string;
  /** Added to located lines (front matter starts after the `+++` line). */
  lineOffset: number;
  problems: Problem[];
}

/**
 * Reads the fields of one TOML table, collecting a problem for every missing,
 * mistyped or unknown key instead of stopping at the first.
 */
export class Fields {
  private readonly seen = new Set<string>();

  constructor(
    readonly context: SourceContext,
    readonly table: TomlTable,
    readonly path: KeyPath = [],
  ) {}

  report(key: string | number | KeyPath, message: string): void {
    const path = Array.isArray(key) ? [...this.path, ...key] : [...this.path, key as string | number];
    const line = locateKey(this.context.source, path);
    this.context.problems.push({
      file: this.context.file,
      ...(line === undefined ? {} : { line: line + this.context.lineOffset }),
      key: formatKeyPath(path),
      message,
    });
  }

  has(key: string): boolean {
    return this.table[key] !== undefined;
  }

  raw(key: string): unknown {
    this.seen.add(key);
    return this.table[key];
  }

  string(key: string, options: { required: true; nonEmpty?: boolean }): string | undefined;
  string(key: string, options?: { required?: false; nonEmpty?: boolean }): string | undefined;
  string(key: string, options: { required?: boolean; nonEmpty?: boolean } = {}): string | undefined {
    const value = this.raw(key);
    if (value === undefined) {
      if (options.required) this.report(key, "is required");
      return undefined;
    }
    if (typeof value !== "string") {
      this.report(key, `must be a string, not ${describe(value)}`);
      return undefined;
    }
    if (options.nonEmpty && value.trim() === "") {
      this.report(key, "must not be empty");
      return undefined;
    }
    return value;
  }

  boolean(key: string): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "boolean") {
      this.report(key, `must be true or false, not ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  number(key: string, bounds: { min?: number; max?: number; integer?: boolean } = {}): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) {
      this.report(key, `must be a number, not ${describe(value)}`);
      return undefined;
    }
    if (bounds.integer && !Number.isInteger(value)) {
      this.report(key, `must be a whole number, not ${value}`);
      return undefined;
    }
    if ((bounds.min !== undefined && value < bounds.min) || (bounds.max !== undefined && value > bounds.max)) {
      const range = bounds.max === undefined ? `at least ${bounds.min}` : `from ${bounds.min ?? "-∞"} to ${bounds.max}`;
      this.report(key, `must be ${range}, not ${value}`);
      return undefined;
    }
    return value;
  }

  stringArray(key: string): string[] | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.report(key, `must be an array of strings, not ${describe(value)}`);
      return undefined;
    }
    const strings: string[] = [];
    value.forEach((item, index) => {
      if (typeof item !== "string" || item.trim() === "") {
        this.report([key, index], `must be a non-empty string, not ${describe(item)}`);
      } else {
        strings.push(item);
      }
    });
    return strings;
  }

  subtable(key: string): Fields | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (!isTable(value)) {
      this.report(key, `must be a table, not ${describe(value)}`);
      return undefined;
    }
    return new Fields(this.context, value, [...this.path, key]);
  }

  tableArray(key: string): Fields[] | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.report(key, `must be an array of tables ([[${formatKeyPath([...this.path, key])}]]), not ${describe(value)}`);
      return undefined;
    }
    const tables: Fields[] = [];
    value.forEach((item, index) => {
      if (!isTable(item)) this.report([key, index], `must be a table, not ${describe(item)}`);
      else tables.push(new Fields(this.context, item, [...this.path, key, index]));
    });
    return tables;
  }

  /** Every key of the table that was never read is a problem: a typo must not silently drop a constraint. */
  rejectUnknown(known: readonly string[] = []): void {
    for (const key of Object.keys(this.table)) {
      if (this.seen.has(key) || known.includes(key)) continue;
      this.report(key, `unknown key${didYouMean(key, [...this.seen, ...known])}`);
    }
  }
}

export function isTable(value: unknown): value is TomlTable {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

export function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  if (value === null) return "null";
  if (typeof value === "object") return "a table";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

/** Pure: the candidate nearest `word` by edit distance, when near enough to be a typo of it. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

/** Pure: ` (did you mean "x"?)` for the candidate nearest `word`, or "". */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const hint = closest(word, candidates);
  return hint ? ` (did you mean "${hint}"?)` : "";
}
