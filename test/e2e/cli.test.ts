import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { makeLoopRepo } from "../helpers/loop-repo.js";
import { MINIMAL_CONFIG, packetToml } from "../helpers/packets.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the built CLI", () => {
  it("runs the demo: four packets, four outcomes, and approve merges the held one", () => {
    const base = mkdtempSync(join(tmpdir(), "factory-demo-test-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, "sample");
    const result = runCli(["demo", "--dir", dir], base, {}, 240_000); // about 30 s on an idle machine
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok: config and 4 packet(s) on main are valid");
    expect(result.stdout).toMatch(/D01#1 → merged/);
    expect(result.stdout).toMatch(/D02#1 → retry: gate test failed/);
    expect(result.stdout).toMatch(/D02#2 → merged/);
    expect(result.stdout).toMatch(/D03#1 → awaiting_human/);
    expect(result.stdout).toMatch(/D04#2 → blocked: out of attempts \(2\/2\): gate untouched failed: test\/format\.test\.js: planted file was modified/);
    expect(result.stdout).toContain("approve D03");
    // The closing text is read from the ledger, not told.
    expect(result.stdout).toContain("What happened, from the ledger:\n  D01: merged after 1 attempt\n  D02: merged after 2 attempts\n  D03: passed every gate");
    expect(result.stdout).toMatch(/ {2}D04: blocked after 2 attempts: out of attempts \(2\/2\): gate untouched failed/);

    const board = JSON.parse(runCli(["status", "--json"], dir).stdout) as { packets: { id: string; state: string; attempts_used: number }[] };
    expect(board.packets.map((p) => [p.id, p.state, p.attempts_used])).toEqual([
      ["D01", "merged", 1],
      ["D02", "merged", 2],
      ["D03", "awaiting_human", 1],
      ["D04", "blocked", 2],
    ]);

    // A process whose parent is an agent (FACTORY_ROLE set) is refused, even when it drops the variable itself.
    const stripped = (command: string) =>
      spawnSync("sh", ["-c", `env -u FACTORY_ROLE "${process.execPath}" "${FACTORY_BIN}" ${command}; exit $?`], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", FACTORY_ROLE: "implementer" },
      });
    for (const command of ["approve D03 --yes", "reset D04", "unblock D04", "reject D03 --reason x"]) {
      const refused = stripped(command);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/refused: it is run from inside an agent or a factory run \(process \d+ has FACTORY_ROLE set\)/);
    }

    const approve = runCli(["approve", "D03", "--yes"], dir);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain("merged into main");
    const log = execFileSync("git", ["log", "--format=%s|%(trailers:key=Factory-Packet,valueonly,separator=)", "main"], { cwd: dir, encoding: "utf8" });
    expect(log.trim().split("\n").slice(0, 3)).toEqual(["feat: One-line report of a column [D03]|D03", "feat: Sum one column of a table [D02]|D02", "feat: Parse European-style amounts [D01]|D01"]);
    // Only gated trees landed: the target's own tests pass, and the user's checkout followed cleanly.
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: dir, encoding: "utf8" })).toBe("");
    // The files by name: `node --test test/` runs the directory as a module on Node 22 and 24.
    const testFiles = readdirSync(join(dir, "test")).map((name) => join("test", name));
    const tests = spawnSync(process.execPath, ["--test", ...testFiles], { cwd: dir, encoding: "utf8" });
    expect(tests.status).toBe(0);
    expect(tests.stdout).toMatch(/(#|ℹ) pass 8/); // TAP on Node 20 and 22, spec on 24
  }, 300_000);

  it("refuses a non-empty demo directory with exit code 2", () => {
    const repo = makeRepo();
    cleanups.push(repo.cleanup);
    const result = runCli(["demo", "--dir", repo.dir], repo.dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("not empty");
  });

  it("exits 2 on invalid packets and on usage errors, 0 on --help", () => {
    const repo: TestRepo = makeRepo();
    cleanups.push(repo.cleanup);
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("packets/A01-a.toml", packetToml("A01", { extra: "bogus = true" }));
    repo.commit("queue");
    const lint = runCli(["lint"], repo.dir);
    expect(lint.code).toBe(2);
    expect(lint.stderr).toContain("packets/A01-a.toml:5: bogus: unknown key");
    expect(runCli(["no-such-command"], repo.dir).code).toBe(2);
    expect(runCli(["status", "--bogus"], repo.dir).code).toBe(2);
    const help = runCli(["--help"], repo.dir);
    expect(help.code).toBe(0);
    for (const command of [
      "init",
      "lint",
      "plan",
      "status",
      "run",
      "approve",
      "reject",
      "reset",
      "unblock",
      "gc",
      "ledger verify",
      "ledger repair",
      "board",
      "diff",
      "report",
      "show",
      "doctor",
      "demo",
    ]) {
      expect(runCli([...command.split(" "), "--help"], repo.dir).stdout).toMatch(new RegExp(`Examples?:\\n {2}factory ${command}`));
    }
    expect(help.stdout).toContain("lint");
  });

  it("below Node 20 refuses in one line naming the version it needs (exit 2)", () => {
    const older = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"18.19.0"})';
    const result = spawnSync(process.execPath, ["--import", older, FACTORY_BIN, "status"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe("factory needs Node.js 20 or newer; this is Node 18.19.0. Install Node 20 or newer and run it again.\n");
  });

  it("prints lint results as JSON", () => {
    const repo = makeRepo();
    cleanups.push(repo.cleanup);
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("docs/SPEC.md", "# spec\n");
    repo.write("api/README.md", "# the api surface\n");
    const spec = repo.commit("spec");
    repo.write("packets/A01-a.toml", packetToml("A01", { specCommit: spec }));
    repo.commit("queue");
    const result = runCli(["lint", "--json"], repo.dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, problems: [], warnings: [] });
  });

  it("refuses out-of-range numbers with exit 2, and ends quietly when its reader closes the pipe", () => {
    const repo = makeRepo();
    cleanups.push(repo.cleanup);
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    for (let at = 0; at < 400; at++) repo.write(`packets/A${at}-a.toml`, packetToml(`A${at}`));
    repo.commit("a long queue");
    for (const args of [
      ["run", "--concurrency", "0"],
      ["run", "--max-cost", "-1"],
      ["unblock", "A1", "--attempts", "1.5"],
    ]) {
      const result = runCli(args, repo.dir);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/argument .* is invalid/);
    }
    const piped = spawnSync("sh", ["-c", `"${process.execPath}" "${FACTORY_BIN}" status --json | head -c 10 > /dev/null; exit 0`], {
      cwd: repo.dir,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(piped.stderr).not.toMatch(/EPIPE|internal error|at /);
  }, 60_000);

  /** `factory run` of a packet whose implementer hangs, once the implementer has started; stdout and stderr gathered. */
  async function runUntilTheAgentHangs(env: Record<string, string> = {}, detached = false) {
    const target = makeLoopRepo({ script: { P01: { implementer: [{ hang: true }] } } });
    cleanups.push(target.cleanup);
    const child = spawn(process.execPath, [FACTORY_BIN, "run"], { cwd: target.dir, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"], detached });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (out.includes("implementer: scripted")) {
          clearInterval(poll);
          resolve();
        }
      }, 100);
    });
    return { target, child, output: () => out, exited };
  }

  it("Ctrl-C at a terminal (SIGINT to the whole process group) ends a run like SIGTERM, and the factory's git shells leave nothing behind", async () => {
    const temporary = mkdtempSync(join(tmpdir(), "factory-ctrl-c-"));
    cleanups.push(() => rmSync(temporary, { recursive: true, force: true }));
    // Its own process group, as a terminal's foreground job has; the factory's shells keep a temporary directory each here.
    const { target, child, output, exited } = await runUntilTheAgentHangs({ TMPDIR: temporary }, true);
    process.kill(-(child.pid as number), "SIGINT");
    expect(await exited, output()).toBe(130);
    expect((await target.events("P01")).map((event) => event.kind)).toContain("attempt-interrupted");
    expect(existsSync(join(target.dir, ".factory/state/run.lock"))).toBe(false);
    expect(output()).not.toMatch(/internal error|the shell that starts git/);
    // The shells end with the factory, and each removes its directory.
    for (let tries = 0; tries < 50 && readdirSync(temporary).some((name) => name.startsWith("factory-git-")); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readdirSync(temporary).filter((name) => name.startsWith("factory-git-"))).toEqual([]);
  }, 60_000);

  it("SIGTERM and SIGHUP end a run like Ctrl-C: the attempt is recorded as interrupted, exit 130, no agent left", async () => {
    for (const signal of ["SIGTERM", "SIGHUP"] as const) {
      const { target, child, exited } = await runUntilTheAgentHangs();
      child.kill(signal);
      expect(await exited).toBe(130);
      expect((await target.events("P01")).map((event) => event.kind)).toContain("attempt-interrupted");
      // The run waits for the sandbox's PID 1 to be gone, and the kernel reaps every process of the namespace before it.
      expect(spawnSync("pgrep", ["-f", target.scriptFile], { encoding: "utf8" }).stdout.trim()).toBe("");
    }
  }, 60_000);
});
