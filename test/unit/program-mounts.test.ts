import { describe, expect, it } from "vitest";
import { programMounts } from "../../src/guards/sandbox-policy.js";
import { bwrapArgs, checkoutShown, emptiedDirs } from "../../src/process/bwrap-args.js";
import { notCovered, npmInstallOf } from "../../src/process/sandbox.js";
import { absolutePathsIn } from "../../src/process/shell-words.js";

describe("what of an agent program named by path the sandbox shows", () => {
  it("its directory, so a script finds the helpers beside it", () => {
    expect(programMounts("/home/me/agents/run", "/home/me")).toEqual(["/home/me/agents"]);
    expect(programMounts("/opt/agent/bin/run", "/home/me")).toEqual(["/opt/agent/bin"]);
  });

  it("the file alone when its directory is HOME or holds it: the real HOME never replaces the private one", () => {
    expect(programMounts("/home/me/run-agent", "/home/me")).toEqual(["/home/me/run-agent"]);
    expect(programMounts("/home/run-agent", "/home/me")).toEqual(["/home/run-agent"]);
    expect(programMounts("/run-agent", "/home/me")).toEqual(["/run-agent"]);
  });

  it("a link into an npm install under HOME (node_modules/.bin/claude): the install that holds the link and the one that holds its target", () => {
    const link = "/home/me/tools/node_modules/.bin/claude";
    const real = "/home/me/tools/node_modules/@anthropic-ai/claude-code/bin/claude.exe";
    expect(programMounts(link, "/home/me", real)).toEqual(["/home/me/tools/node_modules"]);
    expect(programMounts("/home/me/bin/agent", "/home/me", "/home/me/src/agent/run.sh")).toEqual(["/home/me/bin", "/home/me/src/agent"]);
    // Never HOME itself, even for a link whose target lies directly in it.
    expect(programMounts("/home/me/bin/agent", "/home/me", "/home/me/agent.sh")).toEqual(["/home/me/bin", "/home/me/agent.sh"]);
  });
});

describe("the paths a sandboxed command line names", () => {
  it("are its absolute words, past operators and quotes; relative words and flags are not paths", () => {
    expect(absolutePathsIn("FOO=1 node /opt/a.mjs ~/s.json --flag rel.json && cat '/tmp/x y'")).toEqual(["/opt/a.mjs", "/tmp/x y"]);
  });
});

describe("the directories emptied for a sandboxed call", () => {
  it("are the candidates, once each, with the PATH entries and named paths under them mounted back, never an emptied directory itself", () => {
    expect(emptiedDirs(["/tmp", "/var/tmp", "/tmp"], "/usr/bin:/tmp/tools/bin:relative:/tmpfoo/bin", ["/tmp/repo/run.mjs", "/tmp", "/opt/x"])).toEqual({
      emptied: ["/tmp", "/var/tmp"],
      keep: ["/tmp/tools/bin", "/tmp/repo/run.mjs"],
    });
  });

  it("come before every other mount in bwrap's arguments, so what is bound inside them reappears", () => {
    const plan = {
      home: "/h",
      privateHome: "/tmp/s/home",
      privateTmp: "/tmp/s/tmp",
      homeKeep: [],
      root: "/tmp/repo",
      rootShown: ["/tmp/repo/.git"],
      hidden: [],
      secretFiles: [],
      replaced: [],
      masked: [],
      readable: [],
      writable: ["/tmp/wt"],
      readOnly: [],
      scratch: [],
      emptied: ["/tmp", "/run"],
      network: false,
      cwd: "/tmp/wt",
    };
    const args = bwrapArgs(plan, "true");
    const at = (flag: string, path: string): number => args.findIndex((arg, index) => arg === flag && args[index + 1] === path);
    expect(at("--tmpfs", "/tmp")).toBeGreaterThan(0);
    expect(at("--tmpfs", "/tmp")).toBeLessThan(at("--bind", "/tmp/s/home"));
    expect(at("--tmpfs", "/run")).toBeLessThan(at("--tmpfs", "/tmp/repo"));
    // The checkout is an empty directory with its .git shown again, read-only once everything inside has its place.
    expect(args).not.toContain("/tmp/repo/src");
    expect(at("--ro-bind", "/tmp/repo/.git")).toBeGreaterThan(at("--tmpfs", "/tmp/repo"));
    expect(at("--bind", "/tmp/wt")).toBeGreaterThan(at("--tmpfs", "/tmp/repo"));
    expect(at("--remount-ro", "/tmp/repo")).toBeGreaterThan(at("--bind", "/tmp/s/tmp"));
  });
});

describe("what of the user's checkout a sandboxed call sees", () => {
  it("is its git directory and the tool prefixes PATH or the command names inside it, never the checkout, its state or anything outside it", () => {
    const tools = ["/usr/bin", "/repo/.venv/bin", "/repo/node_modules/.bin", "/repo/tools/run.mjs", "/repo", "/repo/.factory/state/x", "/other/bin", "relative/bin"];
    expect(checkoutShown("/repo", ["/repo/.git"], tools, ["/repo/.factory/state"])).toEqual(["/repo/.git", "/repo/.venv", "/repo/node_modules", "/repo/tools/run.mjs"]);
    expect(checkoutShown("/repo", ["/repo/.git", "/main/.git/worktrees/repo", "/main/.git"], [], [])).toEqual(["/repo/.git"]);
    expect(checkoutShown("/repo", ["/repo/.git"], ["/repo/.git/hooks"], [])).toEqual(["/repo/.git"]);
  });
});

describe("what is mounted back of the named paths", () => {
  it("is each path once, and none already inside another mount (a second mount over a read-only one fails)", () => {
    expect(notCovered(["/tmp/a/.bin", "/tmp/a/pkg", "/tmp/a/.bin", "/tmp/w/x.js", "/tmp/a/.bin/tool"], ["/tmp/w", "/tmp/a/pkg"])).toEqual(["/tmp/a/.bin"]);
  });
});

describe("a named program inside an npm install", () => {
  it("shows the whole node_modules it lies in (a CLI needs its sibling packages), the outermost one", () => {
    expect(npmInstallOf("/tmp/p/agent-clis/node_modules/.bin/codex")).toBe("/tmp/p/agent-clis/node_modules");
    expect(npmInstallOf("/tmp/p/node_modules/a/node_modules/b/x.js")).toBe("/tmp/p/node_modules");
    expect(npmInstallOf("/tmp/p/run.mjs")).toBe("/tmp/p/run.mjs");
  });
});
