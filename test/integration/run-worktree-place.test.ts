import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePath, worktreesDir } from "../../src/loop/context.js";
import { DOUBLE_JS, NODE_TEST_GATES, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Worktrees live outside the repository, so a tool that looks for its configuration by walking up from
 * where it runs (eslint's cascade, prettier, editorconfig, pytest's rootdir, node's module resolution)
 * never finds the user's checkout and what is only there (an ignored local config, installed modules).
 */
const setUp = useLoopRepos(afterEach);

/** A gate that walks up from its directory as eslint does, and fails on a local config meant for the user's own editor. */
const WALK_UP = `import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
for (let dir = process.cwd(); ; dir = dirname(dir)) {
  if (existsSync(join(dir, ".local-lint-config"))) { console.error("found " + join(dir, ".local-lint-config")); process.exit(1); }
  if (dirname(dir) === dir) break;
}
`;

describe("a packet's worktree", () => {
  it("is outside the repository: a gate walking up from it never finds a config file only the user's checkout has, and the packet merges", async () => {
    const gate = '\n  [[surfaces.app.gates]]\n  name = "walk-up"\n  run = "node tools/walk-up.mjs"\n';
    const target = setUp({ gates: `${NODE_TEST_GATES}${gate}`, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    target.write("tools/walk-up.mjs", WALK_UP);
    target.write(".gitignore", `${target.read(".gitignore")}.local-lint-config\n`);
    target.commit("a gate that walks up");
    target.write(".local-lint-config", "rules: everything is an error\n"); // the user's own, ignored
    const { code, out } = await target.run();
    expect(out).toMatch(/gate walk-up: pass/);
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(worktreePath(target.dir, "P01").startsWith(`${target.dir}/`)).toBe(false);
    expect(worktreesDir(target.dir).startsWith(`${target.dir}/`)).toBe(false);
    expect(existsSync(worktreePath(target.dir, "P01"))).toBe(false); // removed after landing
  });
});
