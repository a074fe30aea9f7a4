import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hasDotDirectory, ownDirectory } from "../../src/loop/context.js";

/** Where worktrees go when the cache is under a dot-directory: a directory of the shared /var/tmp that must be this user's alone. */
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const uid = process.getuid?.() ?? 0;

describe("the worktrees' directory in a shared temporary directory", () => {
  it("is made private, or taken when it is already this user's private directory", () => {
    const shared = mkdtempSync(join(tmpdir(), "factory-shared-"));
    made.push(shared);
    expect(ownDirectory(join(shared, "factory-1"), uid)).toBe(join(shared, "factory-1"));
    expect(ownDirectory(join(shared, "factory-1"), uid)).toBe(join(shared, "factory-1"));
  });

  it("is refused when a link is there, when others may write to it, when another user owns it, or when it cannot be made", () => {
    const shared = mkdtempSync(join(tmpdir(), "factory-shared-"));
    made.push(shared);
    mkdirSync(join(shared, "elsewhere"));
    symlinkSync(join(shared, "elsewhere"), join(shared, "factory-link"));
    expect(ownDirectory(join(shared, "factory-link"), uid)).toBeUndefined();
    mkdirSync(join(shared, "factory-open"));
    chmodSync(join(shared, "factory-open"), 0o777);
    expect(ownDirectory(join(shared, "factory-open"), uid)).toBeUndefined();
    expect(ownDirectory(join(shared, "factory-1"), uid + 1)).toBeUndefined();
    expect(ownDirectory(join(shared, "missing", "factory-1"), uid)).toBeUndefined();
  });

  it("is used only when the cache's path has a dot-directory", () => {
    expect([hasDotDirectory("/home/me/.cache/factory"), hasDotDirectory("/srv/cache/factory"), hasDotDirectory("/srv/./cache/../factory")]).toEqual([true, false, false]);
  });
});
