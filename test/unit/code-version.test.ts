import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codeVersionOf } from "../../src/packet/queue-cache.js";

describe("the factory's code version (part of the queue and board cache keys)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function installed(): string {
    const top = mkdtempSync(join(tmpdir(), "factory-code-"));
    dirs.push(top);
    mkdirSync(join(top, "packet"));
    writeFileSync(join(top, "cli.js"), "export {};\n");
    writeFileSync(join(top, "packet/rules.js"), "export const rule = 1;\n");
    writeFileSync(join(top, "packet/rules.d.ts"), "export declare const rule: number;\n");
    writeFileSync(join(top, "packet/rules.js.map"), "{}\n");
    return top;
  }

  it("changes when a module in a subdirectory is rebuilt, by content or only by time", () => {
    const top = installed();
    const before = codeVersionOf(top);
    expect(codeVersionOf(top)).toBe(before);
    writeFileSync(join(top, "packet/rules.js"), "export const rule = 2;\n"); // same length
    utimesSync(join(top, "packet/rules.js"), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const rebuilt = codeVersionOf(top);
    expect(rebuilt).not.toBe(before);
    writeFileSync(join(top, "packet/gates.ts"), "export {};\n");
    expect(codeVersionOf(top)).not.toBe(rebuilt);
  });

  it("does not change with declarations or source maps", () => {
    const top = installed();
    const before = codeVersionOf(top);
    writeFileSync(join(top, "packet/rules.d.ts"), "export declare const rule: 1 | 2;\n");
    writeFileSync(join(top, "packet/rules.js.map"), '{"version":3}\n');
    expect(codeVersionOf(top)).toBe(before);
  });
});
