import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/** On a terminal, `run` keeps one redrawn line per packet in flight below the event lines; piped, plain lines only. */
const setUp = useLoopRepos(afterEach);
const slowHonest = { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, sleep: 2500 }] } };

const hasScript = spawnSync("script", ["--version"]).status === 0;
if (!hasScript) console.warn("skipping the live progress tests: script(1) (util-linux) is not installed, so no pseudo-terminal can be had");

describe.skipIf(!hasScript)("live progress", { timeout: 120_000 }, () => {
  it("on a terminal (a pseudo-terminal from script(1)): a redrawn line shows the packet, its step, elapsed time and spend", () => {
    const target = setUp({ script: slowHonest });
    const tty = spawnSync("script", ["-qec", `${process.execPath} ${FACTORY_BIN} run`, "/dev/null"], {
      cwd: target.dir,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 100_000,
    });
    expect(tty.status, tty.stdout).toBe(0);
    expect(tty.stdout).toMatch(/ {2}⋯ P01#1 {2}implementer {2}\d+(\.\d+)?m?s {2}\$0\.00/); // while the agent works
    expect(tty.stdout).toMatch(/ {2}⋯ P01#1 {2}gate test {2}\S+ {2}\$0\.01/); // its cost counted once it reported
    expect(tty.stdout).toContain("\u001b[1A\u001b[0J"); // redrawn in place
    expect(tty.stdout).toContain("P01#1 → merged");
    expect(tty.stdout).not.toMatch(/\u001b\[\d+m/); // NO_COLOR: no colors, only cursor movement
  });

  it("piped: plain event lines, no live line and no escape sequence", () => {
    const target = setUp({ script: slowHonest });
    const piped = runCli(["run"], target.dir, {}, 100_000);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain("P01#1 → merged");
    expect(piped.stdout).not.toContain("⋯");
    expect(piped.stdout).not.toContain("\u001b[");
  });
});
