import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeGitShells, launchGit, quote, script } from "../../src/git/launcher.js";
import { makeRepo, removedAfterEach } from "../helpers/git-repo.js";

/** Git started by the kept-open shells of launcher.ts answers exactly as git started by node. */
const repo = removedAfterEach(afterEach, makeRepo);
afterAll(() => closeGitShells());

async function launched(cwd: string, args: string[]) {
  const call = launchGit(cwd, args);
  if (!call) throw new Error("no shell here to start git");
  return call;
}

const direct = (cwd: string, args: string[]): string => execFileSync("git", args, { cwd, encoding: "utf8" });

describe("git through the launcher's shells", () => {
  it("gives git's output byte for byte, NUL-separated output and arguments no shell may read as code included", async () => {
    const target = repo();
    target.write("a file with 'quotes' $HOME `x`.txt", "one\n");
    target.commit("a file");
    expect((await launched(target.dir, ["rev-parse", "HEAD"])).stdout).toBe(direct(target.dir, ["rev-parse", "HEAD"]));
    const listing = await launched(target.dir, ["ls-files", "-z"]);
    expect(listing).toEqual({ code: 0, stdout: direct(target.dir, ["ls-files", "-z"]), stderr: "" });
    expect(listing.stdout).toContain("a file with 'quotes' $HOME `x`.txt\0");

    const message = "subject with 'quotes', $HOME and `id`\n\nbody; a line\nFactory-Packet: P01\n";
    const tree = direct(target.dir, ["rev-parse", "HEAD^{tree}"]).trim();
    const commit = await launched(target.dir, ["-c", "user.name=it's me", "-c", "user.email=me@localhost", "commit-tree", tree, "-m", message]);
    expect(commit.code).toBe(0);
    expect(direct(target.dir, ["cat-file", "commit", commit.stdout.trim()])).toContain(`\n\n${message}`);
    expect(direct(target.dir, ["cat-file", "commit", commit.stdout.trim()])).toContain("author it's me <me@localhost>");
  });

  it("reports a failure with git's exit code and message, and a directory that is not there", async () => {
    const target = repo();
    const missing = await launched(target.dir, ["rev-parse", "--verify", "--quiet", "no-such-ref"]);
    expect(missing).toEqual({ code: 1, stdout: "", stderr: "" });
    const fatal = await launched(target.dir, ["cat-file", "-p", "no-such-object"]);
    expect(fatal.code).toBe(128);
    expect(fatal.stderr).toMatch(/fatal: Not a valid object name no-such-object/);
    const nowhere = await launched(join(target.dir, "no-such-dir"), ["status"]);
    expect(nowhere.code).not.toBe(0);
    expect(nowhere.stderr).toMatch(/can't cd|No such file/);
  });

  it("runs git with the environment as this process has it at the call, not as it was when the shell started", async () => {
    const target = repo();
    await launched(target.dir, ["rev-parse", "HEAD"]); // a shell is up, started with the environment as it was
    const set = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "factory.probe", GIT_CONFIG_VALUE_0: "it's $set" };
    Object.assign(process.env, set);
    try {
      expect((await launched(target.dir, ["config", "--get", "factory.probe"])).stdout).toBe("it's $set\n");
    } finally {
      for (const name of Object.keys(set)) delete process.env[name];
    }
    expect((await launched(target.dir, ["config", "--get", "factory.probe"])).code).toBe(1); // unset again
  });

  it("answers each of many calls at once with its own output", async () => {
    const target = repo();
    for (let index = 0; index < 5; index++) target.commit(`commit ${index}`);
    const revisions = Array.from({ length: 40 }, (_, index) => `HEAD~${index % 6}`);
    const answers = await Promise.all(revisions.map((revision) => launched(target.dir, ["rev-parse", revision])));
    expect(answers.map((answer) => answer.stdout)).toEqual(revisions.map((revision) => direct(target.dir, ["rev-parse", revision])));
  });

  it("leaves no directory behind when this process is killed, between calls, while git runs, or with no rm on PATH", async () => {
    const launcher = fileURLToPath(new URL("../../dist/git/launcher.js", import.meta.url));
    if (!existsSync(launcher)) return console.warn(`skipped: ${launcher} is not built (npm test builds it first)`);
    const target = repo();
    const onlyGit = mkdtempSync(join(tmpdir(), "factory-launcher-path-"));
    try {
      symlinkSync(execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(), join(onlyGit, "git"));
      for (const [during, path] of [
        [false, process.env.PATH],
        [true, process.env.PATH],
        [false, onlyGit], // a PATH a user's command may give: git, and no rm
      ] as const) {
        const temporary = mkdtempSync(join(tmpdir(), "factory-launcher-kill-"));
        try {
          // With `during`, a second call is still running (git runs `sleep 1` as an alias) when the process is killed.
          const code = `const { launchGit } = await import(${JSON.stringify(launcher)}); await launchGit(process.cwd(), ["rev-parse", "HEAD"]); ${during ? 'launchGit(process.cwd(), ["-c", "alias.slow=!sleep 1", "slow"]); await new Promise((resolve) => setTimeout(resolve, 200));' : ""} console.log("ran"); setInterval(() => {}, 1000);`;
          const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: target.dir, env: { ...process.env, TMPDIR: temporary, PATH: path }, stdio: ["ignore", "pipe", "inherit"] });
          await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
          expect(readdirSync(temporary).filter((name) => name.startsWith("factory-git-")).length).toBeGreaterThan(0);
          child.kill("SIGKILL");
          await new Promise((resolve) => child.once("exit", resolve));
          for (let tries = 0; tries < 50 && readdirSync(temporary).length > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
          expect(readdirSync(temporary), during ? "killed while git ran" : path === onlyGit ? "no rm on PATH" : "killed between calls").toEqual([]);
        } finally {
          rmSync(temporary, { recursive: true, force: true });
        }
      }
    } finally {
      rmSync(onlyGit, { recursive: true, force: true });
    }
  });
});

describe("where no shell can be started", () => {
  it("git is started by node itself, and answers the same", () => {
    const repoModule = fileURLToPath(new URL("../../dist/git/repo.js", import.meta.url));
    if (!existsSync(repoModule)) return console.warn(`skipped: ${repoModule} is not built (npm test builds it first)`);
    const target = repo();
    // No temporary directory for the shells: every call falls back.
    const out = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", `const git = await import(${JSON.stringify(repoModule)}); console.log(await git.gitRun(process.cwd(), ["rev-parse", "HEAD"]));`],
      { cwd: target.dir, env: { ...process.env, TMPDIR: join(target.dir, "no-such-dir") }, encoding: "utf8" },
    );
    expect(out.trim()).toBe(direct(target.dir, ["rev-parse", "HEAD"]).trim());
  });
});

describe("a call's script", () => {
  it("quotes every argument as one word and sets only what changed in the environment", () => {
    expect(quote("it's")).toBe(`'it'\\''s'`);
    const text = script({ cwd: "/a b", args: ["log", "-m", "x'y"] }, { HOME: "/h", GONE: "1", PWD: "/p" }, { HOME: "/h2", NEW: "$x", PWD: "/p" });
    expect(text?.split("\n")).toEqual(["cd -- '/a b' || exit", "unset GONE", "export HOME='/h2'", "export NEW='$x'", "export PWD='/p'", "unset OLDPWD", `exec git 'log' '-m' 'x'\\''y'`, ""]);
    expect(script({ cwd: "/", args: [] }, {}, { "not-a-name": "1" })).toBeUndefined();
  });
});
