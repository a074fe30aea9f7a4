import assert from "node:assert/strict";
import test from "node:test";
import { report } from "../src/report.js";

test("counts rows and totals the column", () => {
  assert.equal(report([{ a: "1.000" }, { a: "250" }, { a: "" }], "a"), "3 rows, total 1250,00");
});
