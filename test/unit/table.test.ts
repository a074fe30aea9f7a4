import { describe, expect, it } from "vitest";
import { displayWidth, renderTable } from "../../src/log/table.js";

describe("renderTable", () => {
  it("pads every column to its widest cell, two spaces apart, with no trailing spaces", () => {
    expect(
      renderTable(
        ["ID", "STATE", "NOTE"],
        [
          ["P1", "merged", ""],
          ["P10", "blocked", "gate test failed"],
        ],
      ),
    ).toBe(["ID   STATE    NOTE", "P1   merged", "P10  blocked  gate test failed"].join("\n"));
  });

  it("measures colour codes as nothing and wide characters as two columns", () => {
    const red = "\x1b[31mblocked\x1b[39m";
    const table = renderTable(
      ["GOAL", "STATE"],
      [
        ["日本語", red],
        ["abc", "queued"],
      ],
    ).split("\n");
    expect(table).toEqual(["GOAL    STATE", `日本語  ${red}`, "abc     queued"]);
    expect(displayWidth(red)).toBe(7);
    expect(displayWidth("日本語")).toBe(6);
    expect(displayWidth("a — b…")).toBe(6);
  });

  it("keeps a cell on one line", () => {
    expect(renderTable(["A", "B"], [["x", "two\n  lines"]])).toBe("A  B\nx  two lines");
  });

  it("lays out 10,000 rows in one line each", () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => [`P${i}`, i % 2 ? "queued" : "merged"]);
    const lines = renderTable(["ID", "STATE"], rows).split("\n");
    expect(lines).toHaveLength(10_001);
    expect(lines[10_000]).toBe("P9999  queued");
  });
});
