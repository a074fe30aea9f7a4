import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN } from "../helpers/cli.js";
import { DEFAULT_GATES, DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * `factory run > night.log` (issue 41 §5): off a terminal there is no live line, so a step that says nothing
 * for a while (a long gate) gets a heartbeat line, and `--json` a heartbeat event. The gate here holds until
 * the test has heard one: nothing waits on a duration.
 */
const setUp = useLoopRepos(afterEach);

function runUntilHeard(dir: string, args: string[], heard: RegExp, go: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [FACTORY_BIN, "run", ...args], { cwd: dir, env: { ...process.env, NO_COLOR: "1", FACTORY_HEARTBEAT_SECONDS: "0.3" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const listen = (chunk: Buffer): void => {
      out += String(chunk);
      if (heard.test(out)) writeFileSync(go, "");
    };
    child.stdout.on("data", listen);
    child.stderr.on("data", listen);
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe("a run whose output is not a terminal", () => {
  for (const json of [false, true]) {
    it(`says a quiet step is alive${json ? " (--json: a heartbeat event)" : ""}, and nothing of it once it moved on`, async () => {
      const target = setUp({
        script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } },
        gates: `${DEFAULT_GATES}\n  [[surfaces.app.gates]]\n  name = "hold"\n  run = "if [ -e src/double.js ]; then while [ ! -e '.git-go' ]; do sleep 0.05; done; fi"\n`,
      });
      // On the candidate only (the tip's own proof passes at once), the gate holds until the test writes the go file, in the repository's .git (readable in the sandbox).
      const go = join(target.dir, ".git", "factory-test-go");
      target.write(".factory/config.toml", target.read(".factory/config.toml").replace("while [ ! -e '.git-go' ]", `while [ ! -e '${go}' ]`));
      target.commit("a gate that holds");
      const heard = json ? /"kind":"heartbeat","packet":"P01","attempt":1,"step":"gates"/ : /P01#1 … still gates \(\d+(\.\d+)?s into the attempt, \$0\.01\)/;
      const { code, out } = await runUntilHeard(target.dir, json ? ["--json"] : [], heard, go);
      expect(out).toMatch(heard);
      expect(code).toBe(0);
      // After the run moved on, no more heartbeats: the last one comes before the packet's outcome.
      const lines = out.split("\n");
      const lastBeat = lines.findLastIndex((line) => heard.test(line) || line.includes('"kind":"heartbeat"'));
      const outcome = lines.findIndex((line) => line.includes("→ merged") || line.includes('"outcome":"merged"'));
      expect(lastBeat).toBeLessThan(outcome);
    }, 60_000);
  }
});
