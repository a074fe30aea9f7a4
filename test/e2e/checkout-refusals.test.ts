import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { worktreesDir } from "../../src/loop/context.js";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { cloneAsWorker } from "../helpers/git-repo.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Checkouts the run cannot work in, refused before anything is claimed with
 * what to do. A `.factory/state` the run cannot write (here a read-only bind mount made
 * by bubblewrap, which even root cannot write through) is refused before
 * anything is claimed, naming the directory: not an internal error.
 */
const setUp = useLoopRepos(afterEach);
const bwrap = spawnSync("bwrap", ["--dev-bind", "/", "/", "true"]).status === 0;
if (!bwrap) console.warn("skipping the read-only state test: bubblewrap cannot make a read-only mount here");

describe.skipIf(!bwrap)("a .factory/state the run cannot write", () => {
  it("is refused before anything is claimed, naming the directory (exit 2); the same checkout writable runs", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const state = join(target.dir, ".factory", "state");
    mkdirSync(state, { recursive: true });
    const readOnly = spawnSync("bwrap", ["--dev-bind", "/", "/", "--ro-bind", state, state, process.execPath, FACTORY_BIN, "run"], {
      cwd: target.dir,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 120_000,
    });
    expect(readOnly.status, `${readOnly.stdout}${readOnly.stderr}`).toBe(2);
    expect(readOnly.stderr).toContain(`factory run refused: ${state} cannot be written: it is on a read-only filesystem (EROFS)`);
    expect(readOnly.stderr).toContain("Nothing was claimed or spent.");
    expect(readOnly.stderr).not.toContain("internal error");
    expect(existsSync(join(state, "ledger.jsonl"))).toBe(false);

    const writable = runCli(["run"], target.dir, {}, 120_000);
    expect(writable.code, `${writable.stdout}${writable.stderr}`).toBe(0);
    expect(writable.stdout).toContain("P01#1 → merged");
  });
});

describe("a shallow clone", () => {
  it("is refused in one line that says so and how to unshallow (exit 2); unshallowed, the same clone runs", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const parent = mkdtempSync(join(tmpdir(), "factory-shallow-"));
    const clone = join(parent, "clone");
    try {
      cloneAsWorker(`file://${target.dir}`, clone, ["--depth", "1"]);
      const refused = runCli(["run"], clone, {}, 120_000);
      expect(refused.code, `${refused.stdout}${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain("factory run refused: this checkout is a shallow clone (git clone --depth)");
      expect(refused.stderr).toContain("`git fetch --unshallow`");
      expect(refused.stderr).not.toContain("re-cut the packet");
      execFileSync("git", ["fetch", "--quiet", "--unshallow"], { cwd: clone });
      const ran = runCli(["run"], clone, {}, 120_000);
      expect(ran.code, `${ran.stdout}${ran.stderr}`).toBe(0);
      expect(ran.stdout).toContain("P01#1 → merged");
    } finally {
      rmSync(worktreesDir(clone), { recursive: true, force: true });
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
