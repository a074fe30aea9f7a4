import { describe, expect, it } from "vitest";
import { waitForRepairs } from "../../src/loop/repairs.js";
import type { Packet } from "../../src/packet/types.js";

const packet = (id: string, surface: string, requires: string[] = [], repairs: string[] = []): Packet => ({ id, surface, requires, repairs }) as unknown as Packet;
const requiresOf = (packets: Packet[]): Record<string, string[]> => Object.fromEntries(packets.map((one) => [one.id, one.requires]));

describe("the queue while a gate is red at the tip", () => {
  it("makes the surface's other packets wait for the repairing ones; another surface's, the repairer's own dependencies and a quiet tip are left alone", () => {
    const queue = [packet("P01", "app"), packet("P02", "app", ["P04"], ["build"]), packet("P03", "web"), packet("P04", "app"), packet("P05", "app", ["P02"])];
    expect(requiresOf(waitForRepairs(queue, [{ surface: "app", gates: ["build"], packets: ["P02"] }]))).toEqual({
      P01: ["P02"],
      P02: ["P04"],
      P03: [],
      P04: [], // P02 needs it first: waiting for P02 would be a cycle
      P05: ["P02"],
    });
    expect(requiresOf(waitForRepairs(queue, []))).toEqual(requiresOf(queue));
  });
});
