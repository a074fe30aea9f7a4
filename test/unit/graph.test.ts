import { describe, expect, it } from "vitest";
import { findCycles, orderQueue } from "../../src/packet/graph.js";

const node = (id: string, ...requires: string[]) => ({ id, requires });

describe("orderQueue", () => {
  it("keeps file order when nothing depends on anything", () => {
    expect(orderQueue([node("B"), node("A"), node("C")]).map((p) => p.id)).toEqual(["B", "A", "C"]);
  });

  it("puts dependencies first, then file order", () => {
    const order = orderQueue([node("A", "C"), node("B"), node("C"), node("D", "A")]);
    expect(order).toEqual([
      { kind: "ready", id: "B" },
      { kind: "ready", id: "C" },
      { kind: "ready", id: "A" },
      { kind: "ready", id: "D" },
    ]);
  });

  it("treats done packets as satisfied and does not list them", () => {
    expect(orderQueue([node("A"), node("B", "A")], { done: new Set(["A"]) })).toEqual([{ kind: "ready", id: "B" }]);
  });

  it("reports cycles, unknown dependencies and what hangs on them", () => {
    const order = orderQueue([node("A", "B"), node("B", "A"), node("C", "X"), node("D", "C"), node("E")]);
    expect(order).toEqual([
      { kind: "ready", id: "E" },
      { kind: "unreachable", id: "A", reason: "dependency cycle: A → B → A" },
      { kind: "unreachable", id: "B", reason: "dependency cycle: A → B → A" },
      { kind: "unreachable", id: "C", reason: 'requires unknown packet "X"' },
      { kind: "unreachable", id: "D", reason: 'requires "C", which cannot run' },
    ]);
  });

  it("holds back stuck packets and their dependents with the reason", () => {
    const order = orderQueue([node("A"), node("B", "A")], { stuck: new Map([["A", "blocked: tamper"]]) });
    expect(order).toEqual([
      { kind: "unreachable", id: "A", reason: "blocked: tamper" },
      { kind: "unreachable", id: "B", reason: 'requires "A", which cannot run' },
    ]);
  });
});

describe("findCycles", () => {
  it("finds self-loops and longer cycles, ignoring acyclic parts", () => {
    expect(findCycles([node("A", "A"), node("B", "C"), node("C", "B"), node("D", "B")])).toEqual([["A"], ["B", "C"]]);
  });
});

describe("large queues", () => {
  const chain = (length: number) => Array.from({ length }, (_, at) => node(`P${at}`, ...(at > 0 ? [`P${at - 1}`] : [])));

  it("orders a 100,000-packet dependency chain without overflowing the stack", () => {
    const nodes = chain(100_000).reverse(); // the file lists the last packet first
    const order = orderQueue(nodes);
    expect(order).toHaveLength(100_000);
    expect(order[0]).toEqual({ kind: "ready", id: "P0" });
    expect(order.at(-1)).toEqual({ kind: "ready", id: "P99999" });
  });

  it("finds a cycle 100,000 packets long", () => {
    const ring = chain(100_000);
    ring[0] = node("P0", "P99999");
    const cycles = findCycles(ring);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(100_000);
  });
});
