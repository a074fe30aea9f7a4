import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import type { Config } from "../../src/config/types.js";
import { installSurface } from "../../src/loop/prepare.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

let repo: TestRepo;
let worktrees = 0;
const counter = join(tmpdir(), `factory-installs-${process.pid}.log`);
afterEach(() => {
  repo?.cleanup();
  rmSync(counter, { force: true });
});

/** An install that counts its runs (outside the repository) and makes node_modules; `extra` may make more. */
function setUp(install: string): Config {
  repo?.cleanup();
  repo = makeRepo();
  repo.write(".gitignore", ".factory/state/\n.factory/worktrees/\n.factory/runs/\nnode_modules/\n");
  const text = `target_branch = "main"
[sandbox]
kind = "none"
[surfaces.web]
dir = "web"
install = "${install}"
[agents.a]
kind = "command"
run = "true"
[tiers]
basic = { agent = "a", model = "m" }
standard = { agent = "a", model = "m" }
advanced = { agent = "a", model = "m" }
`;
  repo.write(".factory/config.toml", text);
  repo.write("web/package.json", "{}\n");
  repo.write("web/package-lock.json", '{"lockfileVersion": 3}\n');
  repo.commit("a web surface");
  const parsed = parseConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

const INSTALL = `echo run >> ${counter} && mkdir -p node_modules/dep/bin && echo 'export default 1;' > node_modules/dep/index.js && printf '#!/bin/sh\\\\n' > node_modules/dep/bin/x && chmod +x node_modules/dep/bin/x && ln -s ../dep/bin/x node_modules/dep/link`;

/** A fresh worktree at main, installed; what the install log says. */
async function installInNewWorktree(config: Config): Promise<{ worktree: string; error: string | undefined; log: string }> {
  const worktree = join(repo.dir, ".factory/worktrees", `w${++worktrees}`);
  repo.git("worktree", "add", "--quiet", "--detach", worktree, "main");
  const runDir = join(repo.dir, ".factory/runs", `w${worktrees}`);
  const surface = config.surfaces[0];
  if (!surface) throw new Error("no surface");
  const error = await installSurface({ root: repo.dir, config, signal: new AbortController().signal }, worktree, surface, runDir);
  const logFile = join(runDir, `install-${surface.name}.log`);
  return { worktree, error, log: existsSync(logFile) ? readFileSync(logFile, "utf8") : "" };
}

const runs = (): number => (existsSync(counter) ? readFileSync(counter, "utf8").split("\n").filter(Boolean).length : 0);

describe("an install is reused across worktrees with the same lock files", () => {
  it("runs once, then copies node_modules (files, modes, links) into the next worktree; a changed lock file installs again", async () => {
    const config = setUp(INSTALL);
    const first = await installInNewWorktree(config);
    expect(first.error).toBeUndefined();
    const second = await installInNewWorktree(config);
    expect(second.error).toBeUndefined();
    expect(runs()).toBe(1);
    expect(second.log).toMatch(/node_modules copied from \.factory\/state\/installs\/[0-9a-f]{32}/);
    const listing = (worktree: string) => repo.git("-C", worktree, "ls-files", "--others", "--ignored", "--exclude-standard", "-s", "web");
    expect(listing(second.worktree)).toBe(listing(first.worktree));
    expect(readFileSync(join(second.worktree, "web/node_modules/dep/link"), "utf8")).toBe("#!/bin/sh\n");

    repo.write("web/package-lock.json", '{"lockfileVersion": 3, "packages": {}}\n');
    repo.commit("a dependency changed");
    await installInNewWorktree(config);
    expect(runs()).toBe(2);
    await installInNewWorktree(config);
    expect(runs()).toBe(2); // the new state is saved in turn
  });

  it("is not reused without a lock file, after an install that made other files too, or after a failed install", async () => {
    const config = setUp(INSTALL);
    repo.git("rm", "--quiet", "web/package-lock.json");
    repo.commit("no lock file");
    await installInNewWorktree(config);
    const again = await installInNewWorktree(config);
    expect(runs()).toBe(2);
    expect(again.log).toContain("not reused by other worktrees: there is no lock file");

    const generating = setUp(`${INSTALL} && echo generated > generated.js`);
    await installInNewWorktree(generating);
    const generated = await installInNewWorktree(generating);
    expect(runs()).toBe(4);
    expect(generated.log).toContain("it also changed web/generated.js");

    const failing = setUp(`${INSTALL} && exit 3`);
    expect((await installInNewWorktree(failing)).error).toMatch(/install of surface "web"/);
    expect((await installInNewWorktree(failing)).error).toMatch(/install of surface "web"/);
    expect(runs()).toBe(6);
  });

  it("is copied with its worktree's absolute path rewritten where pnpm writes it (shims at every level, its state file): each copy names its own worktree", async () => {
    const shims = ["node_modules/.bin/tool", "node_modules/.pnpm/x@1/node_modules/x/node_modules/.bin/inner"];
    const write = shims.map((shim) => `mkdir -p $(dirname ${shim}) && printf 'export NODE_PATH=%s/node_modules/.pnpm:%s0/other\\\\n' $PWD $(dirname $PWD) > ${shim}`).join(" && ");
    const config = setUp(`${INSTALL} && ${write} && printf 'virtualStoreDir: %s/node_modules/.pnpm\\\\n' $PWD > node_modules/.modules.yaml`);
    const first = await installInNewWorktree(config);
    const second = await installInNewWorktree(config);
    expect(runs()).toBe(1);
    expect(second.log).toContain("node_modules copied from");
    for (const shim of [...shims, "node_modules/.modules.yaml"]) {
      const copied = readFileSync(join(second.worktree, "web", shim), "utf8");
      expect(copied).toContain(`${second.worktree}/web/node_modules/.pnpm`);
      expect(copied).not.toContain(`${first.worktree}/`);
      expect(readFileSync(join(first.worktree, "web", shim), "utf8")).toContain(`${first.worktree}/web/node_modules/.pnpm`); // the first is its own
    }
    // A longer path that begins with the old one is another path: left as it was.
    expect(readFileSync(join(second.worktree, "web", shims[0] as string), "utf8")).toContain(`${first.worktree}0/other`);
  });

  it("is not reused when a symbolic link in it names its worktree's absolute path: nothing rewrites a link", async () => {
    const config = setUp(`${INSTALL} && ln -s $PWD/node_modules/dep node_modules/pinned`);
    await installInNewWorktree(config);
    const second = await installInNewWorktree(config);
    expect(runs()).toBe(2);
    expect(second.log).toContain("not reused by other worktrees: node_modules/pinned is a symbolic link to this worktree's absolute path");
  });
});
