import assert from "node:assert/strict";
import test from "node:test";
import { formatAmount } from "../src/format.js";

test("thousands get dots, decimals a comma", () => {
  assert.equal(formatAmount(16429), "16.429,00");
});

test("negative amounts keep their sign", () => {
  assert.equal(formatAmount(-1234.5), "-1.234,50");
});

test("zero", () => {
  assert.equal(formatAmount(0), "0,00");
});
