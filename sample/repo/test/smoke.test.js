import assert from "node:assert/strict";
import test from "node:test";
import * as amount from "../src/amount.js";

test("the amount module loads", () => {
  assert.equal(typeof amount.parseAmount, "function");
});
