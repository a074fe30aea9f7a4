import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { filledByAttempt, SPACE_BEFORE_AGENT } from "../../src/loop/disk-filled.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("whether an attempt filled the disk itself", () => {
  it("is never asked of a disk with room: open files or memory running out is no disk the attempt filled", async () => {
    const root = mkdtempSync(join(tmpdir(), "factory-filled-"));
    made.push(root);
    writeFileSync(join(root, SPACE_BEFORE_AGENT), JSON.stringify({ free: 10 * 1024 ** 3, total: 20 * 1024 ** 3 }));
    // /tmp has room here: undefined before anything is removed (no git repository is even needed).
    expect(await filledByAttempt({ root }, "P01", root)).toBeUndefined();
  });

  it("is the machine's when the implementer never started (nothing recorded) or started on a disk already short", async () => {
    const root = mkdtempSync(join(tmpdir(), "factory-filled-"));
    made.push(root);
    expect(await filledByAttempt({ root }, "P01", root)).toBeUndefined();
    writeFileSync(join(root, SPACE_BEFORE_AGENT), JSON.stringify({ free: 1024, total: 20 * 1024 ** 3 }));
    expect(await filledByAttempt({ root }, "P01", root)).toBeUndefined();
  });
});
