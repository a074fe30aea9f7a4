import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { runCli } from "../helpers/cli.js";
import { MINIMAL_CONFIG, packetToml } from "../helpers/packets.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the built CLI", () => {
  it("runs the demo on a fresh sample repository", () => {
    const base = mkdtempSync(join(tmpdir(), "factory-demo-test-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, "sample");
    const result = runCli(["demo", "--dir", dir], base);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok: config and 4 packet(s) on main are valid");
    expect(result.stdout).toMatch(/4\. D04 .*\[human gate\]/);
    expect(result.stdout).toMatch(/D01\s+queued\s+0\/3/);
    // The sample is a real repository with the queue committed on main.
    const log = runCli(["status", "--json"], dir);
    expect(JSON.parse(log.stdout).packets.map((p: { id: string }) => p.id)).toEqual(["D01", "D02", "D03", "D04"]);
  });

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
    expect(help.stdout).toContain("lint");
  });

  it("prints lint results as JSON", () => {
    const repo = makeRepo();
    cleanups.push(repo.cleanup);
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("packets/A01-a.toml", packetToml("A01"));
    repo.commit("queue");
    const result = runCli(["lint", "--json"], repo.dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, problems: [], warnings: [] });
  });
});
