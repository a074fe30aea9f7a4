import { describe, expect, it } from "vitest";
import { renderTable } from "../../src/log/table.js";

describe("renderTable", () => {
  it("pads every column to its widest cell, two spaces apart, with no trailing spaces", async () => {
    expect(
      await renderTable(
        ["ID", "STATE", "NOTE"],
        [
          ["P1", "merged", ""],
          ["P10", "blocked", "gate test failed"],
        ],
      ),
    ).toBe(["ID   STATE    NOTE", "P1   merged", "P10  blocked  gate test failed"].join("\n"));
  });

  it("measures colour codes as nothing and wide characters as two columns", async () => {
    const red = "\x1b[31mblocked\x1b[39m";
    const table = await renderTable(
      ["GOAL", "STATE"],
      [
        ["日本語", red],
        ["a — b…", "queued"],
      ],
    );
    expect(table.split("\n")).toEqual(["GOAL    STATE", `日本語  ${red}`, "a — b…  queued"]);
  });

  it("an ASCII table with colour codes is measured without them", async () => {
    const red = "\x1b[31mblocked\x1b[39m";
    expect(
      await renderTable(
        ["STATE", "ID"],
        [
          [red, "P1"],
          ["queued", "P2"],
        ],
      ),
    ).toBe(`STATE    ID\n${red}  P1\nqueued   P2`);
  });

  it("keeps a cell on one line", async () => {
    expect(await renderTable(["A", "B"], [["x", "two\n  lines"]])).toBe("A  B\nx  two lines");
  });

  it("lays out 10,000 rows in one line each", async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => [`P${i}`, i % 2 ? "queued" : "merged"]);
    const lines = (await renderTable(["ID", "STATE"], rows)).split("\n");
    expect(lines).toHaveLength(10_001);
    expect(lines[10_000]).toBe("P9999  queued");
  });
});
