import assert from "node:assert/strict";
import test from "node:test";
import { sumColumn } from "../src/column.js";

const rows = [{ amount: "1.000" }, { amount: "250,5" }, { amount: "" }, { amount: "-0,5" }];

test("adds every row of the column", () => {
  assert.equal(sumColumn(rows, "amount"), 1250);
});

test("a missing column adds nothing", () => {
  assert.equal(sumColumn([{}, { amount: "2" }], "amount"), 2);
});
