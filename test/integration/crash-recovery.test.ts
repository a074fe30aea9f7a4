import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * `kill -9` at each step boundary of a run and of `approve` (the factory's
 * test-only FACTORY_CRASH_AT), then the next command: every packet merged
 * exactly once, main green, the user's own uncommitted changes intact and the
 * checkout at main with nothing staged, no worktree or lock left.
 */
const setUp = useLoopRepos(afterEach);
const TRIPLE_JS = "export function triple(n) {\n  return n * 3;\n}\n";
const USER_NOTE = "my notes, not committed\n";
const USER_EDIT = "// my own edit, not committed\n";

function twoPackets(options: { gate?: string } = {}): LoopRepo {
  const target = setUp({
    ...(options.gate ? { packet: options.gate } : {}),
    script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: [{ write: { "src/triple.js": TRIPLE_JS } }] } },
  });
  const p01 = target.read("packets/P01-double.toml");
  target.write("packets/P02-triple.toml", p01.replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js").replace('gate = "human"', ""));
  target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
  target.commit("a second packet");
  // The user's own work in progress, which nothing may touch.
  target.write("notes.txt", USER_NOTE);
  target.write("src/calc.js", `${target.read("src/calc.js")}${USER_EDIT}`);
  return target;
}

function cli(target: LoopRepo, args: string[], crashAt?: string): { code: number | null; out: string } {
  const result = runCli(args, target.dir, crashAt ? { FACTORY_CRASH_AT: crashAt } : {}, 150_000);
  return { code: result.code, out: `${result.stdout}${result.stderr}` };
}

function expectRecovered(target: LoopRepo, packets: string[]): void {
  const subjects = target.subjects();
  for (const [id, goal] of [
    ["P01", "Add double"],
    ["P02", "Add triple"],
  ].filter(([id]) => packets.includes(id ?? ""))) {
    expect(
      subjects.filter((subject) => subject === `feat: ${goal} [${id}]`),
      `${id} lands once`,
    ).toHaveLength(1);
  }
  expect(target.git("rev-parse", "HEAD")).toBe(target.git("rev-parse", "main"));
  expect(target.git("status", "--porcelain", "--untracked-files=all").split("\n").filter(Boolean).sort()).toEqual([" M src/calc.js", "?? notes.txt"]);
  expect(target.read("notes.txt")).toBe(USER_NOTE);
  expect(target.read("src/calc.js").endsWith(USER_EDIT)).toBe(true);
  expect(target.read("src/double.js")).toBe(DOUBLE_JS);
  expect(target.git("worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  for (const lock of ["run.lock", "land.lock"]) expect(existsSync(join(target.dir, ".factory/state", lock)), lock).toBe(false);
  expect(existsSync(join(target.dir, ".factory/state/checkout-forward.json"))).toBe(false);
  target.git("stash", "--include-untracked"); // the suite is judged as committed
  expect(target.targetTestsPass()).toBe(true);
  target.git("stash", "pop");
}

describe("a run killed with SIGKILL at a step boundary, then run again", { timeout: 300_000 }, () => {
  for (const point of ["run-after-claim", "run-after-plant", "run-after-implementer", "run-after-gates", "land-before-move", "land-after-move", "after-land"]) {
    it(`at ${point}: each packet merges exactly once and nothing of the user's is touched`, () => {
      const target = twoPackets();
      const killed = cli(target, ["run"], point);
      expect(killed.code, killed.out).toBeNull(); // killed, not exited
      const again = cli(target, ["run"]);
      expect(again.code, again.out).toBe(0);
      if (point === "land-after-move")
        expect(again.out).toMatch(/your checkout of main at .* was left half-way to [0-9a-f]{10} by a run that was stopped; it is brought forward now \(your own changes kept\)/);
      expectRecovered(target, ["P01", "P02"]);
    });
  }
});

describe("an attempt a killed run left unfinished", { timeout: 300_000 }, () => {
  it("is not counted, and status, show and the brief name the newest attempt as the run's progress did (issue 57 §5)", () => {
    const target = twoPackets();
    expect(cli(target, ["run"], "run-after-implementer").code).toBeNull();
    const again = cli(target, ["run"]);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toMatch(/P01#2\b/);
    const status = cli(target, ["status"]).out;
    expect(status).toMatch(/P01 +merged +1\/2 \(#2\)/);
    expect(status).toMatch(/P02 +merged +1\/2 /);
    expect(cli(target, ["status", "P01"]).out).toContain("attempts: 1 of 2 counted; the newest is #2 (an interrupted attempt, a question, or one refunded on unblock is not counted)");
    expect(cli(target, ["show", "P01"]).out).toContain("attempts: 1 of 2 counted; the newest is #2");
    expect(cli(target, ["report"]).out).toMatch(/P01 +[0-9a-f]{10} +1 attempt\(s\) \(the newest #2\) /);
    const json = JSON.parse(cli(target, ["status", "--json"]).out) as { packets: { id: string; attempts_used: number; last_attempt: number }[] };
    expect(json.packets.find((packet) => packet.id === "P01")).toMatchObject({ attempts_used: 1, last_attempt: 2 });
  });
});

describe("a run killed while landing, then the user's own `git commit -a` before any factory command", { timeout: 300_000 }, () => {
  for (const point of ["land-before-move", "land-after-move", "land-after-forward", "after-land"]) {
    it(`at ${point}: the commit cannot undo the landed packet (it fails while the landing holds the index), and the next run finishes`, () => {
      const target = twoPackets();
      const killed = cli(target, ["run"], point);
      expect(killed.code, killed.out).toBeNull();
      const moved = target.git("log", "--format=%s", "main").includes("[P01]");
      const commit = spawnSync("git", ["commit", "-a", "-m", "my own commit"], { cwd: target.dir, encoding: "utf8" });
      // With the target moved and its checkout not yet forward, the index is the landing's until it is.
      if (moved && point !== "after-land") expect(commit.stderr).toContain("index.lock");
      const again = cli(target, ["run"]);
      expect(again.code, again.out).toBe(0);
      expect(target.git("show", "main:src/double.js")).toBe(DOUBLE_JS);
      expect(target.git("show", "main:src/triple.js")).toBe(TRIPLE_JS);
      for (const id of ["P01", "P02"]) expect(target.subjects().filter((subject) => subject.endsWith(`[${id}]`))).toHaveLength(1);
      expect(target.read("notes.txt")).toBe(USER_NOTE);
      expect(target.read("src/calc.js").endsWith(USER_EDIT)).toBe(true);
      expect(existsSync(join(target.dir, ".git/index.lock"))).toBe(false);
    });
  }
});

describe("approve killed with SIGKILL while landing", { timeout: 300_000 }, () => {
  for (const [point, first] of [
    ["land-after-move", "status"],
    ["land-after-move", "approve"],
    ["after-land", "approve"],
  ] as const) {
    it(`at ${point}, then ${first}: the checkout is brought forward, P01 shows merged, and nothing merges twice`, () => {
      const target = twoPackets({ gate: 'gate = "human"' });
      const ran = cli(target, ["run"]);
      expect(ran.out).toContain("P01#1 → awaiting_human");
      const killed = cli(target, ["approve", "P01", "--yes"], point);
      expect(killed.code, killed.out).toBeNull();
      const next = cli(target, first === "status" ? ["status"] : ["approve", "P01", "--yes"]);
      if (point === "land-after-move") expect(next.out).toMatch(/notice: your checkout of main at .* was left half-way to [0-9a-f]{10} by a run that was stopped; it is brought forward now/);
      if (first === "approve") expect(next.out).toContain("P01 is merged already");
      expect(cli(target, ["status"]).out).toMatch(/P01 +merged/);
      expect(cli(target, ["approve", "P01", "--yes"]).out).toMatch(/P01 is merged already|P01 is merged, not awaiting_human/);
      expectRecovered(target, ["P01", "P02"]);
    });
  }
});
