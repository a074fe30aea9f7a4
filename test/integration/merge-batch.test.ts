import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePath } from "../../src/loop/context.js";
import { runCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { pytestAvailable, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Issue 24: gated attempts waiting to land at the same time are gated together once on their
 * combination (a merge batch) instead of each re-gating its own combination with the suite.
 *
 * The timing is arranged so that a batch must form: P01 and P02 finish first, one lands and the other
 * then needs a re-gate (the tip moved). It waits for the attempts in flight as long as its own gates
 * took; if they arrive, all four form the batch; if not, its re-gate alone is slow (a test of the team's
 * sleeps 9 s on exactly the tree with P01's and P02's modules and no later one), so P03, P04 and P05,
 * whose implementers take 4 s, are all waiting when the landing lock comes free.
 */
const available = pytestAvailable("the merge batch");
const queue = usePythonQueue(afterEach);

const SLOW_TEST = `import os
import time


def test_slow_only_for_the_second_landing():
    here = os.path.dirname(__file__)
    mods = set(os.listdir(os.path.join(here, "..", "pkg")))
    if {"p01.py", "p02.py"} <= mods and "p03.py" not in mods and "p04.py" not in mods and "p05.py" not in mods:
        time.sleep(9)
`;

/** Slow on exactly P02's own tree (its module, none of the others'): P02's gates take 5 s, everyone else's do not. */
const SLOW_OWN_TEST = `import os
import time


def test_slow_only_on_the_second_packets_own_tree():
    here = os.path.dirname(__file__)
    mods = set(os.listdir(os.path.join(here, "..", "pkg")))
    if "p02.py" in mods and not mods & {"p01.py", "p03.py", "p04.py"}:
        time.sleep(5)
`;

function packet(id: string, spec: string, allowed: readonly string[]): string {
  // The renamer rewrites the team's test of what it renames, on purpose: it says so.
  const changed = allowed.filter((path) => path.startsWith("tests/"));
  return `id = "${id}"\ngoal = "Add ${id}"\nspec_commit = "${spec}"\nspec_path = "SPEC.md"\nallowed_paths = ${JSON.stringify(allowed)}\n${changed.length ? `changed_tests = ${JSON.stringify(changed)}\n` : ""}brief = "Add pkg/${id.toLowerCase()}.py."\n[[invariants]]\nid = "works"\nassert = "it works"\n`;
}

/** Five packets (or `count`), each adding pkg/pNN.py with value() and a planted test of it. */
function fivePackets(options: { count?: number; concurrency?: number; install?: string; renamer?: number } = {}): TestRepo {
  const count = options.count ?? 5;
  const repo = queue.track(makeRepo({ initialCommit: false }));
  writePythonProject(repo, {
    ...(options.install ? { install: options.install } : {}),
    config: `${queue.agentConfig}[limits]\nmax_attempts = 1\nconcurrency = ${options.concurrency ?? 5}\n`,
    tests: { "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n", "tests/test_slow.py": SLOW_TEST },
  });
  const spec = repo.commit("python project");
  for (let n = 1; n <= count; n++) {
    const id = `P0${n}`;
    const allowed = n === (options.renamer ?? 4) ? [`pkg/p0${n}.py`, "pkg/calc.py", "tests/test_calc.py"] : [`pkg/p0${n}.py`];
    repo.write(`packets/${id}.toml`, packet(id, spec, allowed));
    repo.write(`packets/supplied/${id}/tests/test_p0${n}.py`, `from pkg.p0${n} import value\n\n\ndef test_value():\n    assert value() == ${n}\n`);
  }
  repo.commit("queue");
  return repo;
}

/** The scripted implementers: P01 and P02 at once, the rest after 4 s (or as `waits` says); `overrides` replaces what a packet writes. */
function script(overrides: Record<string, Record<string, string>> = {}, waits: readonly number[] = [0, 0, 4, 4, 4]): object {
  const entries = waits.map((seconds, index) => {
    const n = index + 1;
    const id = `P0${n}`;
    const write = overrides[id] ?? { [`pkg/p0${n}.py`]: `def value():\n    return ${n}\n` };
    const wait = seconds ? `sleep ${seconds}` : "true";
    return [id, { implementer: [{ write, run: wait }], reviewer: [{ evidence: `pkg/p0${n}.py:2` }] }];
  });
  return Object.fromEntries(entries);
}

function batches(events: readonly { kind: string }[]): { packets: string[]; verdict: string; failed: string[] }[] {
  return events.filter((event) => event.kind === "batch-gated") as unknown as { packets: string[]; verdict: string; failed: string[] }[];
}

describe.skipIf(!available)("a merge batch", () => {
  it("gates the attempts waiting to land together once; each lands with its own commit and trailers, without a re-gate of its own", async () => {
    const target = fivePackets();
    const { code, out, state, events } = await queue.run(target, script());
    expect(code).toBe(0);
    for (const id of ["P01", "P02", "P03", "P04", "P05"]) expect(state.packets.get(id)?.status.state).toBe("merged");
    // At least one batch of two or more was gated green, and its members landed on it.
    const green = batches(events).filter((batch) => batch.verdict === "green" && batch.packets.length >= 2);
    expect(green.length).toBeGreaterThan(0);
    // P01 and P02 finish together: either they reach the landing lock together and form a batch at once, or
    // the one that finds main moved waits for the attempts in flight (P03 to P05 may come in time).
    const together = green.some((batch) => batch.packets.includes("P01") && batch.packets.includes("P02"));
    if (!together) expect(out).toMatch(/P0[12]#1 waiting: up to [\d.]+ s for attempts in flight to join its merge batch/);
    const batched = ["P01", "P02", "P03", "P04", "P05"].filter((id) => out.includes(`${id}#1 batched: its combination with main`));
    expect(batched.length).toBeGreaterThan(0);
    for (const id of batched) {
      expect(green.some((batch) => batch.packets.includes(id))).toBe(true);
      expect(out).not.toContain(`${id}#1 re-gate`); // the batch's gating stood for its own
    }
    // One squash commit per packet, each with its own trailer, and main's suite green.
    const log = target.git("log", "--format=%s%n%b", "main");
    for (const id of ["P01", "P02", "P03", "P04", "P05"]) expect(log).toContain(`Factory-Packet: ${id}`);
    expect(target.git("rev-list", "--count", "main").trim()).toBe("7");
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 120_000);

  it("when the combination is red, bisection finds the one that breaks it: it alone is sent back, with no re-gate of its own, and the others land", async () => {
    const target = fivePackets();
    // P03 uses calc.add; P04 renames it (and its test): each is green alone, together P03's module cannot import.
    const overrides = {
      P03: { "pkg/p03.py": "from pkg.calc import add\n\n\ndef value():\n    return add(1, 2)\n" },
      P04: {
        "pkg/p04.py": "def value():\n    return 4\n",
        "pkg/calc.py": "def plus(a, b):\n    return a + b\n",
        "tests/test_calc.py": "from pkg.calc import plus\n\n\ndef test_add():\n    assert plus(2, 2) == 4\n",
      },
    };
    const { out, state, events } = await queue.run(target, script(overrides));
    // Whichever of P03 and P04 lands second breaks main; the timing decides which, and whether the other landed
    // first (then the red batch starts at the culprit) or shares the red batch with it (then it is the later one).
    const culprit = state.packets.get("P03")?.status.state === "blocked" ? "P03" : "P04";
    const other = culprit === "P03" ? "P04" : "P03";
    const gated = batches(events);
    const reds = gated.filter((batch) => batch.verdict === "red" && batch.packets.includes(culprit));
    const red = reds.find((batch) => batch.packets.length === Math.max(...reds.map((one) => one.packets.length)));
    expect(red).toBeDefined();
    const order = red?.packets ?? [];
    if (order.includes(other)) expect(order.indexOf(other)).toBeLessThan(order.indexOf(culprit));
    const before = order.slice(0, order.indexOf(culprit));
    // Bisection gated shorter prefixes of the red combination, each recorded.
    const prefixes = gated.filter((batch) => batch !== red && batch.packets.length < order.length && order.slice(0, batch.packets.length).join() === batch.packets.join());
    expect(prefixes.length).toBeGreaterThan(0);
    expect(state.packets.get(culprit)?.status.state).toBe("blocked");
    expect(out).toMatch(new RegExp(`${culprit}#1 batched: its combination with main at \\w+ is the one the merge batch \\(${[...before, culprit].join(", ")}\\) found red`));
    expect(out).not.toContain(`${culprit}#1 re-gate`); // the bisection's gating stood for its own
    for (const id of ["P01", "P02", "P05", other]) expect(state.packets.get(id)?.status.state).toBe("merged");
    // main holds the landed one and is green.
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 120_000);

  it("a bisection step that cannot be gated blames nobody: the members land alone, each with its own re-gate", async () => {
    // P02 renames calc.add, P03 uses it: green alone, red together. Both finish after P01 has landed and form a
    // batch; the bisection's one step gates the first of them alone on P01, where the install fails (it fails
    // whenever P01's module is there with exactly one of theirs). Nothing showed which of the two breaks it.
    const install = "if [ -f pkg/p01.py ] && { { [ -f pkg/p02.py ] && [ ! -f pkg/p03.py ]; } || { [ -f pkg/p03.py ] && [ ! -f pkg/p02.py ]; }; }; then echo cannot install >&2; exit 1; fi";
    const target = fivePackets({ count: 3, concurrency: 3, install, renamer: 2 });
    // P02's and P03's own gating (on the tree each began from, before P01) takes 2 s: whichever asks to land first
    // waits about that long for the other, which began with it, to join its batch.
    target.write(
      "tests/test_own_trees.py",
      'import os\nimport time\n\n\ndef test_slow_on_their_own_trees():\n    mods = set(os.listdir(os.path.join(os.path.dirname(__file__), "..", "pkg")))\n    if "p01.py" not in mods and ("p02.py" in mods or "p03.py" in mods):\n        time.sleep(2)\n',
    );
    target.commit("a test slow on the trees P02 and P03 began from");
    const overrides = {
      P02: {
        "pkg/p02.py": "def value():\n    return 2\n",
        "pkg/calc.py": "def plus(a, b):\n    return a + b\n",
        "tests/test_calc.py": "from pkg.calc import plus\n\n\ndef test_add():\n    assert plus(2, 2) == 4\n",
      },
      P03: { "pkg/p03.py": "from pkg.calc import add\n\n\ndef value():\n    return add(1, 2)\n" },
    };
    const { out, state, events } = await queue.run(target, script(overrides, [0, 3, 3]));
    const red = batches(events).find((batch) => batch.verdict === "red");
    expect(red?.packets.slice().sort()).toEqual(["P02", "P03"]);
    expect(batches(events).filter((batch) => batch.verdict === "green")).toEqual([]); // the step was never gated
    const [first, second] = red?.packets ?? [];
    expect(out).not.toMatch(/found red/); // nobody is sent back on the batch's word
    expect(state.packets.get(first as string)?.status.state).toBe("merged");
    expect(out).toContain(`${second}#1 re-gate`); // the later one learnt it breaks main from its own re-gate
    expect(state.packets.get(second as string)?.status.state).toBe("blocked");
    expect(state.packets.get("P01")?.status.state).toBe("merged");
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 120_000);

  it("an attempt parked to wait for its batch frees its worker: the next packet starts before it lands", async () => {
    // Two workers, each step on an event, not a duration. P01 lands at once and its worker takes P03, which
    // holds until P04 is claimed. P02's implementer holds until P03 has begun; its own gates then take 5 s (a
    // test of the team's sleeps on exactly P02's tree), so P03, in flight since before P02 asked to land, may
    // join its batch within them: P02 parks, and its worker, free, claims P04, which lets P03 go on.
    const target = fivePackets({ count: 4, concurrency: 2 });
    target.write("tests/test_slow_own.py", SLOW_OWN_TEST);
    target.commit("a test that is slow on P02's own tree");
    const go = (name: string): string => join(target.dir, ".git", `factory-test-${name}`);
    const hold = (name: string): string => `while [ ! -e '${go(name)}' ]; do sleep 0.05; done`;
    const write = (n: number): Record<string, string> => ({ [`pkg/p0${n}.py`]: `def value():\n    return ${n}\n` });
    const steps = {
      P01: { implementer: [{ write: write(1) }], reviewer: [{ evidence: "pkg/p01.py:2" }] },
      P02: { implementer: [{ write: write(2), run: hold("p03-began") }], reviewer: [{ evidence: "pkg/p02.py:2" }] },
      P03: { implementer: [{ write: write(3), run: `touch began && ${hold("p04-claimed")} && rm began` }], reviewer: [{ evidence: "pkg/p03.py:2" }] },
      P04: { implementer: [{ write: write(4) }], reviewer: [{ evidence: "pkg/p04.py:2" }] },
    };
    const running = queue.run(target, steps);
    await eventually(() => existsSync(join(worktreePath(target.dir, "P03"), "began")), "P03 to begin");
    writeFileSync(go("p03-began"), "");
    await eventually(() => existsSync(worktreePath(target.dir, "P04")), "P04 to be claimed");
    writeFileSync(go("p04-claimed"), "");
    const { code, state, events } = await running;
    expect(code).toBe(0);
    for (const id of ["P01", "P02", "P03", "P04"]) expect(state.packets.get(id)?.status.state).toBe("merged");
    const at = (kind: string, id: string): number => events.findIndex((event) => event.kind === kind && (event as { packet?: string }).packet === id);
    expect(at("claimed", "P04")).toBeGreaterThan(at("review-recorded", "P02"));
    expect(at("claimed", "P04")).toBeLessThan(at("merged", "P02")); // P02's worker was free while P02 waited to land
    // Never more than two packets working (claimed, their review not yet recorded) when one is claimed.
    for (const id of ["P01", "P02", "P03", "P04"]) {
      const claimed = at("claimed", id);
      const working = ["P01", "P02", "P03", "P04"].filter((other) => other !== id && at("claimed", other) < claimed && at("review-recorded", other) > claimed);
      expect(working.length, `working when ${id} was claimed: ${working.join(", ")}`).toBeLessThan(2);
    }
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 120_000);

  it("a landing does not wait for an attempt that began too late to join its batch: it re-gates at once", async () => {
    // Two workers, implementers of 3 s (P02 4 s). One of P01 and P02 lands as gated; P03 begins on its worker. The
    // other then finds main moved: its re-gate would take about a second, and P03, begun a moment ago, needs over 3 s.
    const target = fivePackets({ count: 3, concurrency: 2 });
    const { code, out, state } = await queue.run(target, script({}, [3, 4, 3]));
    expect(code).toBe(0);
    for (const id of ["P01", "P02", "P03"]) expect(state.packets.get(id)?.status.state).toBe("merged");
    // Whichever of P01 and P02 lands second (the 3 s and 4 s implementers order them on an idle machine, not on a
    // loaded one) needed a re-gate, and did not wait for P03 to share it.
    expect(out).toMatch(/P0[12]#1 re-gate: main moved to/);
    expect(out).not.toMatch(/#1 waiting:/);
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 120_000);

  it("killed between two landings of a green batch, the next run lands the rest, each packet exactly once", async () => {
    const target = fivePackets();
    queue.writeScript(script());
    const killed = runCli(["run"], target.dir, { FACTORY_CRASH_AT: "batch-after-first-landing" }, 150_000);
    expect(killed.code).not.toBe(0); // SIGKILL, as a power cut would
    const landedFirst = target.git("log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main").split("\n").filter(Boolean);
    expect(landedFirst.length).toBeGreaterThan(0);
    expect(landedFirst.length).toBeLessThan(5); // the kill came inside the batch, before its other members landed
    const again = runCli(["run"], target.dir, {}, 150_000);
    expect(again.code).toBe(0);
    const landed = target.git("log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main").split("\n").filter(Boolean).sort();
    expect(landed).toEqual(["P01", "P02", "P03", "P04", "P05"]);
    expect(target.git("worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1); // no scratch checkout of the batch is left
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--ignore=packets"], { cwd: target.dir });
  }, 300_000);
});
