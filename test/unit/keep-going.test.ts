import { describe, expect, it } from "vitest";
import { blockKey, heldBehind } from "../../src/loop/scheduler.js";
import type { Packet } from "../../src/packet/types.js";

describe("keep-going rules", () => {
  it("compares block reasons without packet ids, counts and shas", () => {
    expect(blockKey("P01: out of attempts (2/2): baseline: npm ci exited 1")).toBe(blockKey("P17: out of attempts (3/3): baseline: npm ci exited 1"));
    expect(blockKey("docs/SPEC.md changed since the packet was cut at 1a2b3c4d")).toBe(blockKey("docs/SPEC.md changed since the packet was cut at 9f8e7d6c"));
    expect(blockKey("gate test failed: test/a.test.js")).not.toBe(blockKey("gate test failed: test/b.test.js"));
  });

  it("holds every packet that depends, directly or not, on a blocked one, and no other", () => {
    const packet = (id: string, requires: string[] = []) => ({ id, requires }) as unknown as Packet;
    const packets = [packet("A"), packet("B", ["A"]), packet("C", ["B"]), packet("D"), packet("E", ["D"])];
    expect(heldBehind(packets, new Set(["A"])).sort()).toEqual(["B", "C"]);
  });
});
