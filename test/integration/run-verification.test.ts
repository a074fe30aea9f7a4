import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { approve } from "../../src/commands/approve.js";
import { status } from "../../src/commands/status.js";
import { bufferOutput } from "../../src/log/output.js";
import { worktreesDir } from "../../src/loop/context.js";
import { DOUBLE_JS, gateResults, type LoopRepo, NODE_TEST_GATES, useLoopRepos } from "../helpers/loop-repo.js";

/** Every verdict earned, on a node:test project: what lands is what the factory itself checked. */
const setUp = useLoopRepos(afterEach);
const honest = { write: { "src/double.js": DOUBLE_JS } };

function addPacket(target: LoopRepo, id: string, body: string): void {
  target.write(
    `packets/${id}-p.toml`,
    `id = "${id}"\ngoal = "Packet ${id}"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\n${body}\nbrief = "Do ${id}."\n[[invariants]]\nid = "ok"\nassert = "it works"\n`,
  );
}

describe("the merge re-check", () => {
  it("two packets that conflict in meaning, run at once: one lands, the other is caught against the tip's own baseline, and main's tests pass", async () => {
    // P01 adds double() on top of add(); P02 renames add() to sum() (and its test). Each is right alone; together, double() breaks.
    const target = setUp({
      allowed: ["src/double.js"],
      forbidden: [],
      script: {
        P01: { implementer: [{ write: { "src/double.js": `import { add } from "./calc.js";\nexport function double(n) {\n  return add(n, n);\n}\n` } }] },
        P02: {
          implementer: [
            {
              write: {
                "src/calc.js": "export function sum(a, b) {\n  return a + b;\n}\n",
                "test/calc.test.js": `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { sum } from "../src/calc.js";\n\ntest("adds", () => {\n  assert.equal(sum(2, 2), 4);\n});\n`,
              },
            },
          ],
        },
      },
    });
    addPacket(target, "P02", `allowed_paths = ["src/calc.js", "test/calc.test.js"]\nchanged_tests = ["test/calc.test.js"]`);
    target.commit("second packet");
    const { out } = await target.run({ concurrency: 2 });
    // Caught by the later one's re-gate on the moved tip, or, when both were waiting to land at once, by the merge
    // batch gating them together (its bisection names the breaking one): either way against the tip's own baseline.
    expect(out).toMatch(/re-gate|is the one the merge batch \(P0[12], P0[12]\) found red/);
    const merged = ["P01", "P02"].filter((id) => out.includes(`${id}#1 → merged`));
    expect(merged).toHaveLength(1);
    expect(target.subjects().filter((subject) => subject.startsWith("feat:"))).toHaveLength(1);
    expect(target.targetTestsPass()).toBe(true);
  }, 60_000);
});

describe("the merge re-check, in a forced order", () => {
  it("the second packet's change breaks the first one's test, which is not its own planted test: caught against the tip's own baseline", async () => {
    // P01 (double() on add()) lands first; P02 (add() renamed to sum()) finishes 3 s later, on the moved tip.
    // In the combined tree only P01's test fails: a baseline measured on the combined tree would call it
    // already failing and land P02 with main red. Against the tip's own baseline it is a regression.
    const rename = {
      sleep: 3000,
      write: {
        "src/calc.js": "export function sum(a, b) {\n  return a + b;\n}\n",
        "test/calc.test.js": `import assert from "node:assert/strict";\nimport test from "node:test";\nimport { sum } from "../src/calc.js";\n\ntest("adds", () => {\n  assert.equal(sum(2, 2), 4);\n});\n`,
      },
    };
    const target = setUp({
      allowed: ["src/double.js"],
      forbidden: [],
      script: {
        P01: { implementer: [{ write: { "src/double.js": `import { add } from "./calc.js";\nexport function double(n) {\n  return add(n, n);\n}\n` } }] },
        P02: { implementer: [rename] },
      },
    });
    addPacket(target, "P02", `allowed_paths = ["src/calc.js", "test/calc.test.js"]\nchanged_tests = ["test/calc.test.js"]\nmax_attempts = 1`);
    target.commit("second packet");
    const { out } = await target.run({ concurrency: 2 });
    expect(out).toContain("P01#1 → merged");
    expect(out).not.toContain("P02#1 → merged");
    expect(out).toMatch(/P02#1 re-gate: main moved to [0-9a-f]{10}; gating the combined tree/);
    expect(await target.record("P02")).toMatchObject({ status: { state: "blocked", reason: expect.stringMatching(/gate test failed: 1 regression\(s\)/) } });
    expect(target.subjects().filter((subject) => subject.startsWith("feat:"))).toHaveLength(1);
    expect(target.targetTestsPass()).toBe(true);
  }, 60_000);
});

describe("planted tests must run, with node:test", () => {
  it("an implementation that ends the planted test file early, beside a passing test of its own, does not land", async () => {
    const cheat = { write: { "src/double.js": "process.exit(0);\nexport const double = () => 0;\n", "test/mine.test.js": 'import test from "node:test";\ntest("mine", () => {});\n' } };
    const target = setUp({ gates: NODE_TEST_GATES, allowed: ["src/double.js", "test/mine.test.js"], script: { P01: { implementer: [cheat] } } });
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 {3}gate test: fail — 1 planted test\(s\) not passing/);
    expect(code).toBe(1);
    expect(target.subjects()[0]).toBe("queue");
  });
});

describe("test ids", () => {
  it("a baseline measured in one worktree fits the next: a file that fails to load, named by absolute path, is not blamed on another packet", async () => {
    const target = setUp({
      gates: NODE_TEST_GATES,
      packet: `gate = "human"`,
      script: { P01: { implementer: [honest] }, P02: { implementer: [{ write: { "src/triple.js": "export const triple = (n) => n * 3;\n" } }] } },
    });
    target.write("test/broken.test.js", "import { nothing } from '../src/missing.js';\n");
    addPacket(target, "P02", `allowed_paths = ["src/triple.js"]`);
    target.commit("a broken test and a second packet");
    const { out } = await target.run();
    expect(out).toContain("P01#1 → awaiting_human");
    expect(out).toContain("P02#1 → merged");
    const baselines = (await target.events("P02")).filter((event) => event.kind === "baseline-measured");
    expect(baselines).toMatchObject([{ cached: true }]); // measured in P01's worktree, used in P02's
    expect(out).toMatch(/P02#1 {3}gate test: pass — 1\/2 passed; 1 already failing at the baseline/);
  });
});

describe("the baseline after a landing", () => {
  it("is the landing's own gate results (no second run of the suite), and still catches the next packet's regression", async () => {
    // P02 may touch src/double.js, which P01 brings: breaking it is a regression against the seeded baseline.
    const target = setUp({ script: { P01: { implementer: [honest] }, P02: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }] } } });
    addPacket(target, "P02", `allowed_paths = ["src/double.js"]\nrequires = ["P01"]\nmax_attempts = 1`);
    target.commit("a second packet");
    const { out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(out).toMatch(/P02#1 {3}gate test: fail — 1 regression\(s\) of 2/);
    const landed = target.git("rev-parse", "main").trim();
    const baselines = (await target.events("P02")).filter((event) => event.kind === "baseline-measured");
    expect(baselines).toMatchObject([{ commit: landed, cached: true, passed: 2, failed: 0 }]);
    expect(existsSync(join(target.dir, ".factory/runs/P02/attempt-1", `baseline-${landed.slice(0, 10)}`))).toBe(false); // never measured
  });

  it("on a surface with a whole-tree gate and no tests gate, is the landing too: the tip it made is not proven again, and the gate still judges the next packet", async () => {
    // A build of everything (no {files}, not a tests gate): it must be green at a tip before anything is spent there.
    const build = `\n  [[surfaces.app.gates]]\n  name = "build"\n  run = "for f in src/*.js; do node --check \\"$f\\" || exit 1; done"\n`;
    const broken = { write: { "src/triple.js": "export const triple = (n) => n * ;\n" } };
    const target = setUp({ gates: build, planted: null, script: { P01: { implementer: [honest] }, P02: { implementer: [broken] } } });
    addPacket(target, "P02", `allowed_paths = ["src/triple.js"]\nrequires = ["P01"]\nmax_attempts = 1`);
    target.commit("a second packet");
    const { out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(out).toMatch(/P02#1 {3}gate build: fail/);
    const landed = target.git("rev-parse", "main").trim();
    expect((await target.events("P02")).filter((event) => event.kind === "baseline-measured")).toMatchObject([{ commit: landed, cached: true }]);
    expect(existsSync(join(target.dir, ".factory/runs/P02/attempt-1", `baseline-${landed.slice(0, 10)}`))).toBe(false); // never run there
  });
});

describe("the baseline cache", () => {
  it("is kept for the tree the tests see: a commit of packets alone reuses it, a commit of anything else measures again", async () => {
    const triple = { write: { "src/triple.js": "export const triple = (n) => n * 3;\n" } };
    const quad = { write: { "src/quad.js": "export const quad = (n) => n * 4;\n" } };
    const target = setUp({ script: { P01: { implementer: [honest] }, P02: { implementer: [triple] }, P03: { implementer: [quad] } } });
    const measuredAt = (commit: string) => existsSync(join(target.dir, ".factory/runs/preflight", `baseline-${commit.slice(0, 10)}`));
    expect((await target.run()).out).toContain("P01#1 → merged");
    addPacket(target, "P02", `allowed_paths = ["src/triple.js"]`);
    const packetsOnly = target.commit("a second packet");
    expect((await target.run()).out).toContain("P02#1 → merged");
    expect((await target.events("P02")).filter((event) => event.kind === "baseline-measured")).toMatchObject([{ commit: packetsOnly, cached: true }]);
    expect(measuredAt(packetsOnly)).toBe(false);

    target.write("NOTES.md", "a person's notes\n");
    addPacket(target, "P03", `allowed_paths = ["src/quad.js"]`);
    const withNotes = target.commit("notes and a third packet");
    expect((await target.run()).out).toContain("P03#1 → merged");
    expect(measuredAt(withNotes)).toBe(true); // by the run's preflight, before any spend; P03 then used it
    expect((await target.events("P03")).filter((event) => event.kind === "baseline-measured")).toMatchObject([{ commit: withNotes, cached: true }]);
  });
});

describe("the queue is out of the agent's reach", () => {
  it("a packet file the agent creates under packets/ fails the untouched gate and never lands", async () => {
    const sneaky = { write: { ...honest.write, "packets/P09-free.toml": 'id = "P09"\n', "packets/supplied/P01/test/double.test.js": "// weakened\n" } };
    const target = setUp({ script: { P01: { implementer: [sneaky] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(/gate untouched: fail — packets\/(P09-free\.toml|supplied\/P01\/test\/double\.test\.js)/);
    expect(target.subjects()[0]).toBe("queue");
    expect(target.git("ls-tree", "-r", "--name-only", "main", "packets").trim().split("\n")).toEqual(["packets/P01-double.toml", "packets/supplied/P01/test/double.test.js"]);
  });
});

describe("only the agent's work is committed", () => {
  const npm = spawnSync("npm", ["--version"], { encoding: "utf8" }).status === 0;

  it.skipIf(!npm)(
    "a lock file written by install is not committed; node_modules never is, even when the agent adds a dependency",
    async () => {
      const withDependency = {
        write: {
          "src/double.js": DOUBLE_JS,
          "vendor/localdep/package.json": JSON.stringify({ name: "localdep", version: "1.0.0" }),
          "package.json": JSON.stringify({ name: "target", private: true, type: "module", dependencies: { localdep: "file:./vendor/localdep" } }),
        },
        run: "npm install --offline --no-audit --no-fund --silent",
      };
      const target = setUp({
        allowed: ["src/double.js", "vendor/**", "package.json", "package-lock.json"],
        config: "",
        script: { P01: { implementer: [withDependency] } },
      });
      target.write(".factory/config.toml", target.read(".factory/config.toml").replace(`dir = "."`, `dir = "."\ninstall = "npm install --offline --no-audit --no-fund --silent"`));
      target.commit("install step");
      const { code, out } = await target.run();
      expect(out).toContain("P01#1 → merged");
      expect(code).toBe(0);
      const files = target.git("ls-tree", "-r", "--name-only", "main").trim().split("\n");
      expect(files.filter((file) => file.startsWith("node_modules"))).toEqual([]);
      expect(files).toContain("package-lock.json"); // the agent changed package.json beside it, both in scope
      expect(gateResults(await target.events("P01"), 1)).toMatchObject({ scope: "pass" });
    },
    60_000,
  );

  it.skipIf(!npm)(
    "install's own lock file stays out when the agent did not touch the manifest",
    async () => {
      const target = setUp({ script: { P01: { implementer: [honest] } } });
      target.write(".factory/config.toml", target.read(".factory/config.toml").replace(`dir = "."`, `dir = "."\ninstall = "npm install --offline --no-audit --no-fund --silent"`));
      target.commit("install step");
      const { code, out } = await target.run();
      expect(out).toContain("P01#1 → merged");
      expect(code).toBe(0);
      expect(target.git("show", "--name-only", "--format=", "main").trim().split("\n").sort()).toEqual(["src/double.js", "test/double.test.js"]);
    },
    60_000,
  );
});

describe("spec drift", () => {
  it("approve refuses work whose spec moved while it waited for a person, and blocks it", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [honest] } } });
    const { out } = await target.run();
    expect(out).toContain("P01#1 → awaiting_human");
    target.write("docs/SPEC.md", "# spec\n\nTriple things now.\n");
    target.commit("the spec moved");
    const output = bufferOutput();
    const code = await approve({ cwd: target.dir, id: "P01", yes: true, output, signal: new AbortController().signal, input: Readable.from([]), env: {} });
    expect(code).toBe(1);
    expect(output.text()).toMatch(/approve refused: docs\/SPEC\.md changed since the packet was cut/);
    expect((await target.record("P01"))?.status.state).toBe("blocked");
    expect(target.subjects()[0]).toBe("the spec moved");
  });

  it("work whose spec moved after its attempt started does not land (checked again at merge)", async () => {
    // P02 rewrites P01's spec and lands while P01's agent is still at work (a person committing
    // to main mid-attempt is stopped earlier, by the tripwire).
    const target = setUp({
      script: {
        P01: { implementer: [{ ...honest, sleep: 6000 }] },
        P02: { implementer: [{ write: { "docs/SPEC.md": "# spec\n\nTriple things now.\n" } }] },
      },
    });
    target.write(
      "packets/P02-spec.toml",
      `id = "P02"\ngoal = "Move the spec"\nspec_commit = "${target.spec}"\nspec_path = "src/calc.js"\nallowed_paths = ["docs/SPEC.md"]\nbrief = "Rewrite the spec."\n[[invariants]]\nid = "ok"\nassert = "it says triple"\n`,
    );
    target.commit("a packet that moves the spec");
    const { code, out } = await target.run({ concurrency: 2 });
    expect(out).toContain("P01#1 implementer: ok"); // the attempt started before the spec moved
    expect(out).toMatch(/P01#1 → blocked: docs\/SPEC\.md changed since the packet was cut/);
    expect(code).toBe(1);
    expect(target.subjects()[0]).toBe("feat: Move the spec [P02]");
  }, 60_000);
});

describe("state git can vouch for", () => {
  it("a version already on main by its trailers is merged without a ledger, and never runs or lands again", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    expect((await target.run()).code).toBe(0);
    rmSync(`${target.dir}/.factory/state`, { recursive: true, force: true }); // a fresh clone, or a lost ledger
    const shown = bufferOutput();
    await status({ cwd: target.dir, id: undefined, json: true, output: shown });
    expect(JSON.parse(shown.text()).packets).toMatchObject([{ id: "P01", state: "merged" }]);
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toContain("this version is already on main");
    expect((await target.events("P01")).filter((event) => event.kind === "claimed")).toEqual([]);
    expect(target.subjects().filter((subject) => subject.startsWith("feat:"))).toHaveLength(1);
  });
});

describe("preflight", () => {
  it("a missing agent binary is refused before anything is claimed (exit 2), not an attempt spent", async () => {
    const target = setUp({
      agents: `[agents.gone]\nkind = "command"\nrun = "no-such-agent-xyz --go"\n[tiers]\nstandard = { agent = "gone", model = "m" }\nadvanced = { agent = "gone", model = "m" }`,
      script: {},
    });
    const { code, out } = await target.run();
    expect(code).toBe(2);
    expect(out).toContain(`agent "gone": its program "no-such-agent-xyz" was not found on PATH; install it, or fix [agents.gone] run in .factory/config.toml`);
    expect(await target.events("P01")).toEqual([]);
  });
});

describe("leftovers", () => {
  it("a plain directory at the worktree path (a killed run's orphan) is moved aside with a notice, never deleted, and the run goes on", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const worktrees = worktreesDir(target.dir);
    mkdirSync(join(worktrees, "P01"), { recursive: true });
    writeFileSync(join(worktrees, "P01", "notes.txt"), "keep me\n");
    const { code, out } = await target.run();
    expect(out).toMatch(/moved aside to .*\/P01\.orphan-/);
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const orphan = readdirSync(worktrees).find((name) => name.startsWith("P01.orphan-"));
    expect(orphan && readFileSync(join(worktrees, orphan, "notes.txt"), "utf8")).toBe("keep me\n");
  });
});

describe("a whole-tree gate that hangs on the candidate", () => {
  it("is the work's failure, not the machine's: it ran green on the tip before the attempt", async () => {
    // A build of the whole tree that never ends on code marked SLOW.
    const build = `import { existsSync, readFileSync } from "node:fs";\nif (existsSync("src/double.js") && readFileSync("src/double.js", "utf8").includes("SLOW")) for (;;) {}\n`;
    const gates = `${NODE_TEST_GATES}\n  [[surfaces.app.gates]]\n  name = "build"\n  run = "node build.mjs"\n  timeout = "3s"\n`;
    const slow = { write: { "src/double.js": `// SLOW\n${DOUBLE_JS}` } };
    const target = setUp({ gates, script: { P01: { implementer: [slow, { write: { "src/double.js": DOUBLE_JS } }] } } });
    target.write("build.mjs", build);
    target.commit("a whole-tree build gate");
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 {3}gate build: fail — timed out after 3s on this change; it finished on the baseline/);
    expect(out).not.toContain("two environment errors");
    expect(out).toContain("P01#2 → merged");
    expect(code).toBe(0);
  }, 90_000);
});
