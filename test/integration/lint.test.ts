import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { setUpSample } from "../../src/commands/demo.js";
import { lint } from "../../src/commands/lint.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { type LoopRepo, makeLoopRepo } from "../helpers/loop-repo.js";
import { MINIMAL_CONFIG, packetToml } from "../helpers/packets.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

function setUp(): TestRepo {
  repo = makeRepo();
  repo.write(".factory/config.toml", MINIMAL_CONFIG);
  repo.write("docs/SPEC.md", "# spec\n");
  repo.write("api/README.md", "# the api surface\n"); // its directory, as committed
  return repo;
}

async function runLint(ids: string[] = []) {
  const output = bufferOutput();
  const code = await lint({ cwd: repo.dir, ids, json: false, output });
  return { code, out: output.stdout.join("\n"), err: output.stderr.join("\n") };
}

function snapshot(target: TestRepo): string {
  return target.git("status", "--porcelain", "--untracked-files=all", "--ignored");
}

describe("factory lint", () => {
  it("names every defect of a directory of bad packets, with its file, and exits 2", async () => {
    setUp();
    const spec = repo.commit("spec");
    const p = (id: string, options: Parameters<typeof packetToml>[1] = {}) => packetToml(id, { specCommit: spec, ...options });
    repo.write("packets/A01-typo.toml", p("A01", { extra: `requirs = ["A02"]` }));
    repo.write("packets/A02-noinv.toml", p("A02", { invariants: "" }));
    repo.write("packets/A03-dup.toml", p("A03", { invariants: `[[invariants]]\nid = "x"\nassert = "a"\n[[invariants]]\nid = "x"\nassert = "b"` }));
    repo.write("packets/A04-unknown.toml", p("A04", { extra: `requires = ["Z99"]` }));
    repo.write("packets/A05-cycle.toml", p("A05", { extra: `requires = ["A06"]` }));
    repo.write("packets/A06-cycle.toml", p("A06", { extra: `requires = ["A05"]` }));
    repo.write("packets/A07-both.toml", p("A07", { extra: `forbidden_paths = ["api/**"]\ndeletable_paths = ["api/old.py"]` }));
    repo.write("packets/A08-empty.toml", p("A08", { brief: "" }));
    repo.write("packets/A09-syntax.toml", `id = "A09"\ngoal = "unterminated\n`);
    repo.write("packets/A10-mismatch.toml", p("A11"));
    repo.write("packets/A12-fine.toml", p("A12"));
    repo.commit("packets");
    const before = snapshot(repo);
    const { code, err } = await runLint();
    expect(code).toBe(2);
    const lines = err.split("\n");
    const expectations: [string, string][] = [
      ["packets/A01-typo.toml:5:", "requirs: unknown key"],
      ["packets/A02-noinv.toml", "at least one [[invariants]]"],
      ["packets/A03-dup.toml:14:", 'duplicate invariant id "x"'],
      ["packets/A04-unknown.toml:5:", 'depends on unknown packet "Z99"'],
      ["packets/A05-cycle.toml:5:", "dependency cycle: A05 → A06 → A05"],
      ["packets/A06-cycle.toml:5:", "dependency cycle: A05 → A06 → A05"],
      ["packets/A07-both.toml:6:", "cannot be both"],
      ["packets/A08-empty.toml:", "brief: must not be empty"],
      ["packets/A09-syntax.toml:2:", "TOML syntax error"],
      ["packets/A10-mismatch.toml:1:", 'does not match the file name "A10-mismatch.toml"'],
    ];
    for (const [where, what] of expectations) {
      expect(
        lines.some((line) => line.startsWith(where) && line.includes(what)),
        `${where} … ${what}\n${err}`,
      ).toBe(true);
    }
    expect(err).not.toContain("A12-fine");
    expect(err).toContain("10 problem(s) in 10 file(s)");
    expect(snapshot(repo)).toBe(before); // lint writes nothing
  });

  it("resolves every spec_commit and spec_path, and names planted files whose packet does not exist", async () => {
    setUp();
    const spec = repo.commit("spec");
    repo.write("packets/A01-one.toml", packetToml("A01", { specCommit: "abcdef1234" }));
    repo.write("packets/A02-two.toml", packetToml("A02", { specCommit: spec }).replace('spec_path = "docs/SPEC.md"', 'spec_path = "docs/NOPE.md"'));
    repo.write("packets/A03-three.toml", packetToml("A03", { specCommit: spec }));
    repo.write("packets/supplied/A03/tests/fixtures/a.json", "{}\n");
    repo.write("packets/supplied/A3/tests/fixtures/b.json", "{}\n");
    repo.commit("packets");
    const { code, err } = await runLint();
    expect(code).toBe(2);
    expect(err).toContain("packets/A01-one.toml: spec_commit: spec_commit abcdef1234 is not a commit in this repository");
    expect(err).toMatch(/packets\/A02-two\.toml: spec_path: spec_path docs\/NOPE\.md does not exist at spec_commit [0-9a-f]{10}/);
    expect(err).toContain('packets/supplied/A3/: no packet has id "A3", so these planted files are never used');
    expect(err).not.toContain("A03");
  });

  it("exits 0 on valid packets and says how many it checked", async () => {
    setUp();
    const spec = repo.commit("spec");
    repo.write("packets/A01-one.toml", packetToml("A01", { specCommit: spec }));
    repo.write("packets/A02-two.md", `+++\nid = "A02"\ngoal = "g"\nspec_commit = "${spec}"\nspec_path = "README.md"\nrequires = ["A01"]\n[[invariants]]\nid = "i"\nassert = "a"\n+++\nDo it.\n`);
    repo.commit("packets");
    const { code, out, err } = await runLint();
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("config and 2 packet(s) on main are valid");
  });

  it("reads packets from the target branch, warning about uncommitted and edited ones", async () => {
    setUp();
    const spec = repo.commit("spec");
    repo.write("packets/A01-one.toml", packetToml("A01", { specCommit: spec }));
    repo.write("packets/A03-staged.toml", packetToml("A03", { specCommit: spec }));
    repo.commit("packets");
    repo.write("packets/A01-one.toml", packetToml("A01", { extra: "bogus = 1" }));
    repo.write("packets/A02-new.toml", "not even toml = = =");
    // Staged but not committed, and ignored: git status must not hide either.
    repo.write("packets/A03-staged.toml", packetToml("A03", { extra: "bogus = 2" }));
    repo.git("add", "packets/A03-staged.toml");
    repo.write(".git/info/exclude", "packets/A04-ignored.toml\n");
    repo.write("packets/A04-ignored.toml", packetToml("A04"));
    const { code, err } = await runLint();
    expect(code).toBe(0);
    expect(err).toContain("warning: packets/A01-one.toml has uncommitted edits; the version committed on main is used");
    expect(err).toContain("warning: packets/A02-new.toml is not committed on main, so it is not in the queue; commit it to queue it");
    expect(err).toContain("warning: packets/A03-staged.toml has uncommitted edits; the version committed on main is used");
    expect(err).toContain("warning: packets/A04-ignored.toml is not committed on main, so it is not in the queue; commit it to queue it");
    expect(err.match(/^warning: /gm)).toHaveLength(4);
  });

  it("reads the queue from the target branch even when another branch is checked out", async () => {
    setUp();
    repo.commit("base");
    repo.git("checkout", "-q", "-b", "feature");
    repo.write("packets/A01-one.toml", "broken = = =");
    repo.commit("broken packet on a feature branch");
    const { code, err } = await runLint();
    expect(code).toBe(0);
    expect(err).toContain("A01-one.toml is not committed on main");
    expect(err).toContain("warning: lint reads the queue as committed on main (the target branch), not on feature, which you have checked out");
  });

  it("checks only the named packets, and refuses an unknown id", async () => {
    setUp();
    const spec = repo.commit("spec");
    repo.write("packets/A01-one.toml", packetToml("A01", { specCommit: spec }));
    repo.write("packets/A02-bad.toml", packetToml("A02", { extra: "bogus = 1" }));
    repo.commit("packets");
    expect((await runLint(["A01"])).code).toBe(0);
    const bad = await runLint(["A02"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("packets/A02-bad.toml:5: bogus: unknown key");
    const unknown = await runLint(["Q9"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no packet with id "Q9" on main');
  });

  it("reports config problems and packet problems together", async () => {
    setUp();
    repo.write(".factory/config.toml", `${MINIMAL_CONFIG}\n[limits]\nmax_attempts = 0\n`);
    repo.write("packets/A01-one.toml", packetToml("A01", { extra: "bogus = 1" }));
    repo.commit("packets");
    const { code, err } = await runLint();
    expect(code).toBe(2);
    expect(err).toContain(".factory/config.toml:16: limits.max_attempts: must be from 1 to 10, not 0");
    expect(err).toContain("packets/A01-one.toml:5: bogus: unknown key");
  });

  it("refuses a config that is not committed on the target branch", async () => {
    repo = makeRepo();
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    const result = await runLint();
    expect(result.code).toBe(2);
    expect(result.err).toContain(".factory/config.toml: is not committed on main; commit it");
  });

  it("refuses a missing config or target branch, saying what to do", async () => {
    repo = makeRepo();
    let result = await runLint();
    expect(result.code).toBe(2);
    expect(result.err).toContain(".factory/config.toml: not found; run `factory init`");
    repo.write(".factory/config.toml", MINIMAL_CONFIG.replace('"main"', '"release"'));
    result = await runLint();
    expect(result.code).toBe(2);
    expect(result.err).toContain('target_branch: the target branch "release" has no commits');
  });

  it("warns, exit 0, about what a packet says of the repository that cannot hold: a scope typo, a missing file in the brief, a planted import", async () => {
    setUp();
    repo.write(".factory/config.toml", MINIMAL_CONFIG.replace('dir = "api"', 'dir = "api"\n[[surfaces.api.gates]]\nname = "tests"\nrun = "pytest --junitxml={junit}"\ntests = true'));
    repo.write("api/thing.py", "def thing():\n    return 1\n");
    const spec = repo.commit("spec and code");
    const p = (id: string, options: Parameters<typeof packetToml>[1] = {}) => packetToml(id, { specCommit: spec, ...options });
    repo.write("packets/B01-scope.toml", p("B01", { extra: `allowed_paths = ["aip/thing.py"]` }));
    repo.write("packets/B02-brief.toml", p("B02", { extra: `allowed_paths = ["api/thing.py"]`, brief: "Change `api/thing.py` as `api/thng_helpers.py` says." }));
    repo.write("packets/B03-import.toml", p("B03", { extra: `allowed_paths = ["api/thing.py"]` }));
    repo.write("packets/supplied/B03/api/tests/test_b03.py", "from api.things import thing\n\ndef test_thing():\n    assert thing() == 2\n");
    repo.commit("queue");
    const { code, err } = await runLint();
    expect(code).toBe(0);
    expect(err.split("\n").filter((line) => line.includes("warning"))).toEqual([
      'warning: packets/B01-scope.toml: allowed_paths: "aip/thing.py" matches no path at the tip, and aip/ does not exist there (a typo? a new top-level directory is fine)',
      "warning: packets/B02-brief.toml: brief: names `api/thng_helpers.py`, which is not at the tip and is not in the packet's scope to create",
      "warning: packets/B03-import.toml: api/tests/test_b03.py: imports api.things, which is not at the tip and which the packet may not create",
    ]);
  });

  it("has no content warning for the demo's queue or the loop tests' packet", async () => {
    const base = mkdtempSync(join(tmpdir(), "factory-lint-sample-"));
    try {
      await setUpSample(base, "none");
      const output = bufferOutput();
      expect(await lint({ cwd: base, ids: [], json: false, output })).toBe(0);
      expect(output.stderr).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
    const loop = makeLoopRepo({ script: {} });
    try {
      const output = bufferOutput();
      expect(await lint({ cwd: loop.dir, ids: [], json: false, output })).toBe(0);
      expect(output.stderr).toEqual([]);
    } finally {
      loop.cleanup();
    }
  });

  describe("input that parses, then costs a night", () => {
    /** Each case changes the loop repository (a valid queue) in one way and names the problem lint must give. */
    const cases: [string, (loop: LoopRepo) => void, RegExp][] = [
      [
        "a 20 MB brief",
        (loop) => loop.write("packets/P01-double.toml", loop.read("packets/P01-double.toml").replace("Add src/double.js exporting double(n), which returns n * 2.", "x".repeat(20_000_000))),
        /^packets\/P01-double\.toml:\d+: brief: is 19531 KB, over 100 KB: it goes into every prompt/m,
      ],
      [
        "a 30 MB planted test",
        (loop) => loop.write("packets/supplied/P01/test/big.test.js", "a".repeat(30_000_000)),
        /^packets\/supplied\/P01\/test\/big\.test\.js: is 28\.6 MB, over \[limits\] max_file_size \(10\.0 MB\)/m,
      ],
      [
        "a binary planted test",
        (loop) => loop.write("packets/supplied/P01/test/bin.test.js", "\u0000\u0001binary"),
        /^packets\/supplied\/P01\/test\/bin\.test\.js: is binary \(it holds a NUL byte\)/m,
      ],
      [
        "a planted test that is a symbolic link",
        (loop) => {
          loop.write("test/real.test.js", "// the team's own\n");
          symlinkSync("../../../../test/real.test.js", join(loop.dir, "packets/supplied/P01/test/link.test.js"));
        },
        /^packets\/supplied\/P01\/test\/link\.test\.js: is a symbolic link: plant the file itself/m,
      ],
      [
        "a packet's planted folder that is a file",
        (loop) => {
          rmSync(join(loop.dir, "packets/supplied/P01"), { recursive: true });
          loop.write("packets/supplied/P01", "not a folder\n");
        },
        /^packets\/supplied\/P01: is a file: a packet's planted files go in a folder/m,
      ],
      [
        "a surface directory that does not exist",
        (loop) => loop.write(".factory/config.toml", loop.read(".factory/config.toml").replace('dir = "."', 'dir = "web"')),
        /^\.factory\/config\.toml:4: surfaces\.app\.dir: "web" is not a directory of the repository at the tip/m,
      ],
    ];
    it.each(cases)("%s is a lint problem naming the file (and the line where there is one), exit 2", async (_what, change, said) => {
      const loop = makeLoopRepo({ script: {} });
      try {
        change(loop);
        loop.commit("bad input");
        const output = bufferOutput();
        expect(await lint({ cwd: loop.dir, ids: [], json: false, output })).toBe(2);
        expect(output.stderr.join("\n")).toMatch(said);
      } finally {
        loop.cleanup();
      }
    });

    it("a [target] remote the repository does not have is a lint problem, exit 2, and run refuses it alike before fetching", async () => {
      const loop = makeLoopRepo({ script: {}, config: '[target]\nremote = "upstream"\n' });
      try {
        const output = bufferOutput();
        expect(await lint({ cwd: loop.dir, ids: [], json: false, output })).toBe(2);
        const said = /^\.factory\/config\.toml: target\.remote: "upstream" is not a remote of this repository/m;
        expect(output.stderr.join("\n")).toMatch(said);
        const { code, out } = await loop.run();
        expect(code).toBe(2);
        expect(out).toMatch(said);
        expect(out).not.toContain("git fetch");
        expect(await loop.events()).toEqual([]);
      } finally {
        loop.cleanup();
      }
    });

    it.each(cases)("%s is refused by run too, before anything is claimed or spent, exit 2", async (_what, change, said) => {
      const loop = makeLoopRepo({ script: {} });
      try {
        change(loop);
        loop.commit("bad input");
        const { code, out } = await loop.run();
        expect(code).toBe(2);
        expect(out).toMatch(said);
        expect(await loop.events("P01")).toEqual([]);
      } finally {
        loop.cleanup();
      }
    });

    it("hidden tests that are a file, a folder of no packet, or committed are lint problems; untracked in the packet's folder, they are not", async () => {
      const loop = makeLoopRepo({ script: {} });
      try {
        const check = async (): Promise<{ code: number; err: string }> => {
          const output = bufferOutput();
          const code = await lint({ cwd: loop.dir, ids: [], json: false, output });
          return { code, err: output.stderr.join("\n") };
        };
        loop.write(".factory/holdout/P01/test/more.test.js", "// hidden\n");
        expect((await check()).code).toBe(0);
        loop.write(".factory/holdout/P99/test/more.test.js", "// hidden\n");
        loop.write(".factory/holdout/P02", "not a folder\n");
        const wrong = await check();
        expect(wrong.code).toBe(2);
        expect(wrong.err).toContain('.factory/holdout/P99/: no packet has id "P99", so these hidden tests are never run');
        expect(wrong.err).toContain(".factory/holdout/P02: is a file: hidden tests go in a folder per packet");
        rmSync(join(loop.dir, ".factory/holdout/P99"), { recursive: true });
        rmSync(join(loop.dir, ".factory/holdout/P02"));
        loop.git("add", "-f", ".factory/holdout");
        loop.git("commit", "--quiet", "-m", "hidden tests, committed by mistake");
        const committed = await check();
        expect(committed.code).toBe(2);
        expect(committed.err).toContain(".factory/holdout/P01/: its holdout files are committed (.factory/holdout/P01/test/more.test.js)");
      } finally {
        loop.cleanup();
      }
    });
  });
});
