import { describe, expect, it } from "vitest";
import type { PacketOutcome } from "../../src/loop/process-packet.js";
import { blockKey, type HaltMemory, haltAfter, heldBehind } from "../../src/loop/scheduler.js";
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

  describe("the halting policy, outcome after outcome", () => {
    const fresh: HaltMemory = { environmentErrors: 0, lastBlock: undefined };
    /** The halts of a run's outcomes in order, as the Drain applies them. */
    const halts = (outcomes: readonly [string, PacketOutcome][], keepGoing: boolean): (string | undefined)[] => {
      let memory = fresh;
      return outcomes.map(([id, outcome]) => {
        const after = haltAfter(id, outcome, memory, keepGoing);
        memory = after.memory;
        return after.halt;
      });
    };
    const blocked = (reason: string, more: Partial<Extract<PacketOutcome, { kind: "blocked" }>> = {}): PacketOutcome => ({ kind: "blocked", reason, packetFault: false, ...more });
    const environment: PacketOutcome = { kind: "retry", environment: true };

    it("halts at the first block without --keep-going; with it, only an alarm or a second block for the same cause does", () => {
      expect(halts([["P01", blocked("gate test failed")]], false)).toEqual(["P01 is blocked: gate test failed"]);
      expect(
        halts(
          [
            ["P01", blocked("npm ci exited 1 at abc1234")],
            ["P02", blocked("npm ci exited 1 at def5678")],
          ],
          true,
        ),
      ).toEqual([undefined, "two packets in a row blocked for the same reason (the machine or the spec, not the work): P02: npm ci exited 1 at def5678"]);
      expect(halts([["P01", blocked("the landing contradicted the verdict", { alarm: true })]], true)).toEqual(["P01 is blocked: the landing contradicted the verdict"]);
    });

    it("stays quiet on blocks with --keep-going that are the packets' own, or for other causes, or with a landing between", () => {
      expect(
        halts(
          [
            ["P01", blocked("spec moved", { packetFault: true })],
            ["P02", blocked("spec moved", { packetFault: true })],
          ],
          true,
        ),
      ).toEqual([undefined, undefined]);
      expect(
        halts(
          [
            ["P01", blocked("gate test failed: a")],
            ["P02", blocked("gate lint failed: b")],
          ],
          true,
        ),
      ).toEqual([undefined, undefined]);
      expect(
        halts(
          [
            ["P01", blocked("npm ci exited 1")],
            ["P02", { kind: "merged", commit: "c" }],
            ["P03", blocked("npm ci exited 1")],
          ],
          true,
        ),
      ).toEqual([undefined, undefined, undefined]);
    });

    it("halts at two environment errors in a row, and not when anything else came between", () => {
      expect(
        halts(
          [
            ["P01", environment],
            ["P02", environment],
          ],
          true,
        ),
      ).toEqual([undefined, "two environment errors in a row: the machine is broken, not the work (see the gate and install logs)"]);
      expect(
        halts(
          [
            ["P01", environment],
            ["P02", { kind: "retry", environment: false }],
            ["P03", environment],
          ],
          true,
        ),
      ).toEqual([undefined, undefined, undefined]);
      expect(
        halts(
          [
            ["P01", environment],
            ["P02", { kind: "held" }],
            ["P03", environment],
          ],
          true,
        ),
      ).toEqual([undefined, undefined, undefined]);
    });
  });
});
