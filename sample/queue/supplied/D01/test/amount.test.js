import assert from "node:assert/strict";
import test from "node:test";
import { parseAmount } from "../src/amount.js";

test("a dot separates thousands", () => {
  assert.equal(parseAmount("16.429"), 16429);
});

test("a comma separates decimals", () => {
  assert.equal(parseAmount("1.234,5"), 1234.5);
});

test("a leading minus is negative", () => {
  assert.equal(parseAmount("-7,25"), -7.25);
});

test("garbage is refused", () => {
  assert.throws(() => parseAmount("twelve"), /twelve/);
});
