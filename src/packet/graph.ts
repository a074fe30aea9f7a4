/** The dependency graph of a queue, as pure functions over `{ id, requires }`. */
export interface Node {
  id: string;
  requires: readonly string[];
}

/** Every elementary cycle's members, each cycle reported once (Tarjan's strongly connected components). */
export function findCycles(nodes: readonly Node[]): string[][] {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;

  const visit = (id: string): void => {
    index.set(id, counter);
    low.set(id, counter);
    counter++;
    stack.push(id);
    onStack.add(id);
    for (const next of byId.get(id)?.requires ?? []) {
      if (!byId.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(id, Math.min(low.get(id) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(id, Math.min(low.get(id) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(id) === index.get(id)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== id);
      const selfLoop = component.length === 1 && (byId.get(id)?.requires ?? []).includes(id);
      if (component.length > 1 || selfLoop) cycles.push(component.reverse());
    }
  };
  for (const node of nodes) if (!index.has(node.id)) visit(node.id);
  return cycles;
}

export type Placement =
  | { kind: "ready"; id: string }
  | { kind: "unreachable"; id: string; reason: string };

/**
 * The order a queue runs in: a packet comes after everything it requires,
 * otherwise in the given (file) order. Packets that can never run (unknown
 * dependency, cycle, or a dependency that cannot run) are listed with why.
 * `done` ids count as satisfied dependencies without being placed.
 */
export interface OrderOptions {
  /** Already merged: satisfied dependencies, not placed. */
  done?: ReadonlySet<string>;
  /** Packets that exist but cannot run, with why (invalid file, blocked). */
  stuck?: ReadonlyMap<string, string>;
}

export function orderQueue(nodes: readonly Node[], options: OrderOptions = {}): Placement[] {
  const done = options.done ?? new Set<string>();
  const stuck = options.stuck ?? new Map<string, string>();
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const inCycle = new Map<string, string[]>();
  for (const cycle of findCycles(nodes)) for (const id of cycle) inCycle.set(id, cycle);

  const placed = new Set<string>(done);
  const order: Placement[] = [];
  const pending = nodes.filter((node) => !done.has(node.id));
  let progress = true;
  while (progress) {
    progress = false;
    for (const node of pending) {
      if (placed.has(node.id) || inCycle.has(node.id) || stuck.has(node.id)) continue;
      if (node.requires.every((dependency) => placed.has(dependency))) {
        placed.add(node.id);
        order.push({ kind: "ready", id: node.id });
        progress = true;
        break; // restart from the top so file order wins among ready packets
      }
    }
  }
  for (const node of pending) {
    if (placed.has(node.id)) continue;
    order.push({ kind: "unreachable", id: node.id, reason: stuck.get(node.id) ?? whyUnreachable(node, byId, inCycle, placed, stuck) });
  }
  return order;
}

function whyUnreachable(
  node: Node,
  byId: ReadonlyMap<string, Node>,
  inCycle: ReadonlyMap<string, string[]>,
  placed: ReadonlySet<string>,
  stuck: ReadonlyMap<string, string>,
): string {
  const cycle = inCycle.get(node.id);
  if (cycle) return `dependency cycle: ${[...cycle, cycle[0]].join(" → ")}`;
  const unknown = node.requires.filter((dependency) => !byId.has(dependency) && !placed.has(dependency) && !stuck.has(dependency));
  if (unknown.length > 0) return `requires unknown packet ${unknown.map((id) => `"${id}"`).join(", ")}`;
  const blocked = node.requires.filter((dependency) => !placed.has(dependency));
  return `requires ${blocked.map((id) => `"${id}"`).join(", ")}, which cannot run`;
}
