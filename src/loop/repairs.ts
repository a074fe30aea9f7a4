import type { Packet } from "../packet/types.js";
import type { Repairing } from "./preflight-checks.js";

/**
 * Pure: the queue as it runs while whole-tree gates are red at the tip: every other packet of that surface
 * requires the packets that repair them, so it waits until the repair has landed (the tip green again),
 * except those a repairing packet itself requires (they go first, on the red tip, as its dependencies).
 */
export function waitForRepairs(packets: readonly Packet[], repairing: readonly Repairing[]): Packet[] {
  const byId = new Map(packets.map((packet) => [packet.id, packet]));
  const neededBy = (ids: readonly string[]): Set<string> => {
    const needed = new Set<string>();
    const visit = (id: string): void => {
      for (const dependency of byId.get(id)?.requires ?? []) {
        if (needed.has(dependency)) continue;
        needed.add(dependency);
        visit(dependency);
      }
    };
    for (const id of ids) visit(id);
    return needed;
  };
  return packets.map((packet) => {
    const first = repairing.filter((repair) => repair.surface === packet.surface && !repair.packets.includes(packet.id) && !neededBy(repair.packets).has(packet.id));
    const waitsFor = [...new Set(first.flatMap((repair) => repair.packets))].filter((id) => !packet.requires.includes(id));
    return waitsFor.length > 0 ? { ...packet, requires: [...packet.requires, ...waitsFor] } : packet;
  });
}

/** Pure: per red surface, its gates, the packets that repair them and the packets that wait for those to land (waitForRepairs' waiting). */
export function repairsFirst(packets: readonly Packet[], repairing: readonly Repairing[]): { surface: string; gates: string[]; repairers: string[]; waiting: string[] }[] {
  const waited = waitForRepairs(packets, repairing);
  return repairing.map((repair) => ({
    surface: repair.surface,
    gates: repair.gates,
    repairers: repair.packets,
    waiting: waited.filter((packet, index) => packet.requires.length > (packets[index]?.requires.length ?? 0) && repair.packets.some((id) => packet.requires.includes(id))).map((packet) => packet.id),
  }));
}
