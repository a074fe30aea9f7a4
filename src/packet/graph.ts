/** The dependency graph of a queue, as pure functions over `{ id, requires }`. */
export interface Node {
  id: string;
  requires: readonly string[];
}

/**
 * Every cycle's members, each cycle reported once (Tarjan's strongly
 * connected components). Iterative, with an explicit stack: a dependency
 * chain of any length must not overflow the call stack.
 */
export function findCycles(nodes: readonly Node[]): string[][] {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;

  const enter = (id: string): { id: string; next: number } => {
    index.set(id, counter);
    low.set(id, counter);
    counter++;
    stack.push(id);
    onStack.add(id);
    return { id, next: 0 };
  };
  for (const root of nodes) {
    if (index.has(root.id)) continue;
    const frames = [enter(root.id)];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { id: string; next: number };
      const requires = byId.get(frame.id)?.requires ?? [];
      if (frame.next < requires.length) {
        const next = requires[frame.next++] as string;
        if (!byId.has(next)) continue;
        if (!index.has(next)) frames.push(enter(next));
        else if (onStack.has(next)) low.set(frame.id, Math.min(low.get(frame.id) ?? 0, index.get(next) ?? 0));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) ?? 0, low.get(frame.id) ?? 0));
      if (low.get(frame.id) !== index.get(frame.id)) continue;
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.id);
      const selfLoop = component.length === 1 && requires.includes(frame.id);
      if (component.length > 1 || selfLoop) cycles.push(component.reverse());
    }
  }
  return cycles;
}

export type Placement = { kind: "ready"; id: string } | { kind: "unreachable"; id: string; reason: string };

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

  // Kahn's algorithm with a ready-heap keyed by file position: among the
  // packets whose dependencies are all placed, the earliest in the file goes first.
  const placed = new Set<string>(done);
  const order: Placement[] = [];
  const pending = nodes.filter((node) => !done.has(node.id));
  const position = new Map(pending.map((node, at) => [node.id, at]));
  const waitingOn = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  const ready = new MinHeap();
  for (const node of pending) {
    if (inCycle.has(node.id) || stuck.has(node.id)) continue;
    const open = [...new Set(node.requires)].filter((dependency) => !placed.has(dependency));
    waitingOn.set(node.id, open.length);
    for (const dependency of open) {
      const list = dependents.get(dependency);
      if (list) list.push(node.id);
      else dependents.set(dependency, [node.id]);
    }
    if (open.length === 0) ready.push(position.get(node.id) ?? 0);
  }
  for (let at = ready.pop(); at !== undefined; at = ready.pop()) {
    const node = pending[at] as Node;
    placed.add(node.id);
    order.push({ kind: "ready", id: node.id });
    for (const dependent of dependents.get(node.id) ?? []) {
      const left = (waitingOn.get(dependent) ?? 0) - 1;
      waitingOn.set(dependent, left);
      if (left === 0) ready.push(position.get(dependent) ?? 0);
    }
  }
  for (const node of pending) {
    if (placed.has(node.id)) continue;
    order.push({ kind: "unreachable", id: node.id, reason: stuck.get(node.id) ?? whyUnreachable(node, byId, inCycle, placed, stuck) });
  }
  return order;
}

function whyUnreachable(node: Node, byId: ReadonlyMap<string, Node>, inCycle: ReadonlyMap<string, string[]>, placed: ReadonlySet<string>, stuck: ReadonlyMap<string, string>): string {
  const cycle = inCycle.get(node.id);
  if (cycle) return `dependency cycle: ${[...cycle, cycle[0]].join(" → ")}`;
  const unknown = node.requires.filter((dependency) => !byId.has(dependency) && !placed.has(dependency) && !stuck.has(dependency));
  if (unknown.length > 0) return `requires unknown packet ${unknown.map((id) => `"${id}"`).join(", ")}`;
  const blocked = node.requires.filter((dependency) => !placed.has(dependency));
  return `requires ${blocked.map((id) => `"${id}"`).join(", ")}, which cannot run`;
}

/** A binary min-heap of numbers: the ready packets' file positions. */
class MinHeap {
  private readonly items: number[] = [];

  push(value: number): void {
    const items = this.items;
    items.push(value);
    for (let at = items.length - 1; at > 0; ) {
      const parent = (at - 1) >> 1;
      if ((items[parent] as number) <= value) break;
      items[at] = items[parent] as number;
      items[parent] = value;
      at = parent;
    }
  }

  pop(): number | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    for (let at = 0; ; ) {
      const left = 2 * at + 1;
      const right = left + 1;
      let smallest = at;
      if (left < items.length && (items[left] as number) < (items[smallest] as number)) smallest = left;
      if (right < items.length && (items[right] as number) < (items[smallest] as number)) smallest = right;
      if (smallest === at) break;
      [items[at], items[smallest]] = [items[smallest] as number, items[at] as number];
      at = smallest;
    }
    return top;
  }
}
