import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { joined } from "../../src/log/output.js";
import { BOARD_CACHE_FILES, boardCacheKey, readBoardCache, withRunField, writeBoardCache } from "../../src/status/board-cache.js";
import { textOf } from "../../src/status/kept-text.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "factory-board-cache-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const board = { schema: 1, branch: "main", packets: [{ id: "A01", goal: "a — ü 名", requires: [] }], warnings: ["w"] };
const text = Buffer.from(JSON.stringify(board, null, 2));
const alive = () => true;

describe("board cache", () => {
  it("adds the run to the board's text exactly as printing the whole object would", () => {
    for (const run of [null, { run: "r", pid: 7, host: "h", startedAt: "2026-12-01T00:00:00.000Z", alive: false }, { nested: { list: [1, "two\nlines"] } }]) {
      expect(joined(withRunField(textOf(text), run)).toString("utf8")).toBe(JSON.stringify({ ...board, run }, null, 2));
    }
    expect(() => withRunField(textOf(Buffer.from("[1]")), null)).toThrow(/not the text of a JSON object/);
  });

  it("gives back the text kept under the same key, and nothing for another key, another view or a file that is not its own", () => {
    mkdirSync(join(root, ".factory/state"), { recursive: true });
    writeBoardCache(root, "json", "k1", { text, owners: [], note: undefined });
    expect(readBoardCache(root, "json", "k1", alive)?.text.bytes().equals(text)).toBe(true);
    expect(readBoardCache(root, "json", "k2", alive)).toBeUndefined();
    expect(readBoardCache(root, "table", "k1", alive)).toBeUndefined();

    const path = join(root, ".factory/state", BOARD_CACHE_FILES.json);
    const kept = readFileSync(path, "utf8");
    writeFileSync(path, kept.slice(0, -1)); // cut short: no closing brace
    expect(readBoardCache(root, "json", "k1", alive)).toBeUndefined();
    writeFileSync(path, `not json\n${text}`);
    expect(readBoardCache(root, "json", "k1", alive)).toBeUndefined();
  });

  it("keeps a view's note beside its text", () => {
    mkdirSync(join(root, ".factory/state"), { recursive: true });
    writeBoardCache(root, "table", "k", { text: Buffer.from("ID  STATE\n"), owners: [], note: { warnings: ["w"], problems: 2 } });
    const kept = readBoardCache(root, "table", "k", alive);
    expect(kept?.text.bytes().toString()).toBe("ID  STATE\n");
    expect(kept?.note).toEqual({ warnings: ["w"], problems: 2 });
  });

  it("is not used when an owner it asked about gets another answer now", () => {
    mkdirSync(join(root, ".factory/state"), { recursive: true });
    writeBoardCache(root, "json", "k", { text, owners: [{ pid: 41, host: "here", alive: true }], note: undefined });
    const kept = readBoardCache(root, "json", "k", () => true);
    expect(kept).toBeDefined();
    kept?.text.close();
    expect(readBoardCache(root, "json", "k", (owner) => owner.pid !== 41)).toBeUndefined();
  });

  it("reads a large kept view in pieces, as it was when opened, and lets go of the file", () => {
    mkdirSync(join(root, ".factory/state"), { recursive: true });
    const openFiles = () => readdirSync("/proc/self/fd").length;
    const before = openFiles();
    const large = Buffer.from(JSON.stringify({ packets: Array.from({ length: 30_000 }, (_, i) => ({ id: `P${i}`, goal: "ü 名" })) }, null, 2));
    expect(large.length).toBeGreaterThan(3 * 256 * 1024);
    writeBoardCache(root, "json", "k", { text: large, owners: [], note: undefined });
    const kept = readBoardCache(root, "json", "k", alive);
    if (!kept) return expect.unreachable("kept board not served");
    writeBoardCache(root, "json", "k", { text, owners: [], note: undefined }); // kept again meanwhile: replaced by rename
    let pieces = 0;
    const read = joined(
      (function* () {
        for (const piece of withRunField(kept.text, null)) {
          pieces++;
          yield piece;
        }
      })(),
    );
    expect(pieces).toBeGreaterThan(3);
    expect(read.toString("utf8")).toBe(JSON.stringify({ ...JSON.parse(large.toString("utf8")), run: null }, null, 2));
    expect(openFiles()).toBe(before);
    readBoardCache(root, "json", "k", alive)?.text.close();
    readBoardCache(root, "table", "k", alive)?.text.close();
    expect(openFiles()).toBe(before);
  });

  it("keeps no file where the factory keeps no state", () => {
    writeBoardCache(root, "json", "k", { text, owners: [], note: undefined });
    expect(readBoardCache(root, "json", "k", alive)).toBeUndefined();
  });

  it("keys a board by every input: a change in any one gives another key", () => {
    const inputs = { queue: "q", ledger: "l", branch: "main", tip: "t", problems: [], warnings: [], host: "h" };
    const base = boardCacheKey(inputs);
    const changes = [{ queue: "q2" }, { ledger: "l2" }, { branch: "dev" }, { tip: "t2" }, { problems: [{ file: "f", message: "m" }] }, { warnings: ["w"] }, { host: "h2" }];
    for (const change of changes) expect(boardCacheKey({ ...inputs, ...change })).not.toBe(base);
    expect(boardCacheKey({ ...inputs })).toBe(base);
  });
});
