import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, NODE_TEST_GATES, useLoopRepos } from "../helpers/loop-repo.js";
import { useTemporaryHome } from "../helpers/temporary-home.js";

/**
 * A pnpm project, installed the way a user who has used pnpm before has it: pnpm's default store under
 * ~/.local/share/pnpm, which the sandbox keeps read-only (a toolchain home). pnpm comes from the factory's
 * own devDependencies; the project's one dependency is a local package with an executable, so no registry
 * is needed and pnpm still writes its store and its absolute-path .bin shims.
 */
const PNPM = fileURLToPath(new URL("../../node_modules/.bin/pnpm", import.meta.url));
const available = existsSync(PNPM);
if (!available) console.warn("skipping the pnpm tests: node_modules/.bin/pnpm is missing (npm ci installs it)");

const setUp = useLoopRepos(afterEach);
const home = useTemporaryHome(beforeEach, afterEach, "pnpm");

// The shim pnpm wrote names the worktree it is in (its NODE_PATH), never the one an install was copied from.
const TOOL_GATE = '\n  [[surfaces.app.gates]]\n  name = "tool"\n  run = "pnpm exec say-ok && grep -qF \\"$(pwd)/node_modules/.pnpm\\" node_modules/.bin/say-ok"\n';

describe.skipIf(!available)("factory run on a pnpm project", () => {
  it("installs into the factory's own writable store (the user's is read-only in the sandbox), once: the packet's worktree gets a copy whose shims name it, and merges", async () => {
    const target = setUp({ gates: `install = "pnpm install --frozen-lockfile"\n${NODE_TEST_GATES}${TOOL_GATE}`, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    target.write("vendor/say-ok/package.json", JSON.stringify({ name: "say-ok", version: "1.0.0", bin: { "say-ok": "bin.js" } }));
    target.write("vendor/say-ok/bin.js", "#!/usr/bin/env node\nconsole.log('ok');\n");
    target.write("package.json", JSON.stringify({ name: "target", private: true, type: "module", devDependencies: { "say-ok": "file:./vendor/say-ok" } }));
    target.write(".gitignore", `${target.read(".gitignore")}node_modules/\n`);
    const env = { ...process.env, HOME: home, PATH: `${join(PNPM, "..")}:${process.env.PATH}` };
    // The user's own first install: the lock file, and pnpm's store in the user's HOME.
    execFileSync(PNPM, ["install"], { cwd: target.dir, env, stdio: "pipe" });
    expect(existsSync(join(home, ".local/share/pnpm"))).toBe(true);
    rmSync(join(target.dir, "node_modules"), { recursive: true, force: true });
    target.commit("a pnpm project");

    process.env.PATH = env.PATH;
    try {
      const { code, out } = await target.run();
      expect(out).not.toMatch(/EROFS|environment error/);
      expect(out).toContain("P01#1 → merged");
      expect(code).toBe(0);
    } finally {
      process.env.PATH = env.PATH?.slice(join(PNPM, "..").length + 1);
    }
    const log = readFileSync(join(target.dir, ".factory/runs/P01/attempt-1/install-app.log"), "utf8");
    // The preflight's install at the tip was copied; the gates above ran the copy's shim.
    expect(log).toContain("node_modules copied from .factory/state/installs/");
    expect(log).not.toContain("not reused");
    expect(existsSync(join(target.dir, ".factory/state/package-caches/pnpm-store"))).toBe(true);
  });
});
