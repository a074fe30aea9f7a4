import { describe, expect, it } from "vitest";
import { parseBatch } from "../../src/git/repo.js";

describe("git cat-file --batch output", () => {
  it("gives each blob's text in order, undefined for a missing path or a tree, with any bytes inside", () => {
    const out = Buffer.concat([Buffer.from("aaaa blob 6\nab\ncd\n\n"), Buffer.from("HEAD:nope missing\n"), Buffer.from("bbbb tree 3\nxyz\n"), Buffer.from("cccc blob 0\n\n")]);
    expect(parseBatch(out, 4).map((bytes) => bytes?.toString("utf8"))).toEqual(["ab\ncd\n", undefined, undefined, ""]);
  });

  it("keeps a binary blob's bytes exactly", () => {
    const bytes = Buffer.from([0, 255, 10, 13, 0x80, 0xc3]);
    const out = Buffer.concat([Buffer.from(`aaaa blob ${bytes.length}\n`), bytes, Buffer.from("\n")]);
    expect(parseBatch(out, 1)[0]).toEqual(bytes);
  });
});
