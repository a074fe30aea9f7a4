import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * Issue 58 §4: every key the config parser reads is in the configuration reference. The keys come from the
 * parser's own source (each `fields.string("key")`, `number`, `duration`, `size`, `subtable`, …, in
 * src/config/parse.ts), never from the reference, so a key added to the parser and not documented fails here.
 */
const PARSER = readFileSync(new URL("../../src/config/parse.ts", import.meta.url), "utf8");
const REFERENCE = readFileSync(new URL("../../docs/reference/configuration.md", import.meta.url), "utf8");
const READERS = ["raw", "string", "boolean", "number", "stringArray", "subtable", "tableArray", "duration", "size"];

/** Pure: the literal keys `source` hands to one of the field readers. */
function keysRead(source: string): string[] {
  const call = new RegExp(`\\b(?:${READERS.join("|")})\\("([A-Za-z_]+)"`, "g");
  return [...new Set([...source.matchAll(call)].map((match) => match[1] as string))].sort();
}

/** Pure: whether the reference shows `key` as a key: `key =`, `[key]`/`[key.…]`, `` `key` ``, or `key:` in a comment. */
function documented(reference: string, key: string): boolean {
  return new RegExp(`(^|[\\s\\[{,.#(])${key}(\\s*=|\\]|\\.|\`|:)`, "m").test(reference) || reference.includes(`\`${key}\``);
}

describe("the configuration reference", () => {
  it("documents every key the parser reads", () => {
    const keys = keysRead(PARSER);
    expect(keys.length).toBeGreaterThan(60); // the readers are found: the list is the parser's
    expect(keys.filter((key) => !documented(REFERENCE, key))).toEqual([]);
  });

  it("would name a key it lacks", () => {
    expect(keysRead('fields.number("max_widgets", { min: 1 }); fields.duration("widget_wait")')).toEqual(["max_widgets", "widget_wait"]);
    expect(documented("max_attempts = 3\n", "max_widgets")).toBe(false);
    expect(documented("[limits]\nmax_attempts = 3\n", "max_attempts")).toBe(true);
    expect(documented("[surfaces.api]\n", "surfaces")).toBe(true);
  });
});
