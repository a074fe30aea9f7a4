import { describe, expect, it } from "vitest";
import { relocateText } from "../../src/loop/install-cache.js";

describe("relocateText", () => {
  it("rewrites every whole mention of the old worktree path, in the shapes pnpm's shims write it", () => {
    const shim = 'export NODE_PATH="/w/P1/node_modules/.pnpm/a@1/node_modules:/w/P1/node_modules/.pnpm/node_modules"\nexec node "$basedir/../a/cli.js"\n';
    expect(relocateText(shim, "/w/P1", "/w/P2")).toBe(shim.replaceAll("/w/P1/", "/w/P2/"));
    expect(relocateText("root: /w/P1\n", "/w/P1", "/z")).toBe("root: /z\n");
    expect(relocateText("'/w/P1' \"/w/P1\" /w/P1:x /w/P1;", "/w/P1", "/z")).toBe("'/z' \"/z\" /z:x /z;");
  });

  it("leaves a longer path that only begins with it, and reads the old path literally (no pattern characters)", () => {
    expect(relocateText("/w/P10/node_modules /w/P1-x", "/w/P1", "/z")).toBe("/w/P10/node_modules /w/P1-x");
    expect(relocateText("/a.b/P1/x /aXb/P1/x", "/a.b/P1", "/z")).toBe("/z/x /aXb/P1/x");
  });

  it("writes the new path as it is, even with characters a replacement pattern would read", () => {
    expect(relocateText("/w/P1/x", "/w/P1", "/tmp/$&/P2")).toBe("/tmp/$&/P2/x");
  });
});
