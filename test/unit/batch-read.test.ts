import { describe, expect, it } from "vitest";
import { parseBatch } from "../../src/git/repo.js";

describe("git cat-file --batch output", () => {
  it("gives each blob's text in order, undefined for a missing path or a tree, with any bytes inside", () => {
    const out = Buffer.concat([Buffer.from("aaaa blob 6\nab\ncd\n\n"), Buffer.from("HEAD:nope missing\n"), Buffer.from("bbbb tree 3\nxyz\n"), Buffer.from("cccc blob 0\n\n")]);
    expect(parseBatch(out, 4)).toEqual(["ab\ncd\n", undefined, undefined, ""]);
  });
});
