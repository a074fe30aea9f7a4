import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { geminiAdapter } from "../../src/agents/gemini.js";
import type { Agent } from "../../src/config/types.js";

/**
 * The Gemini CLI relaunches itself (a second node process per call) unless
 * GEMINI_CLI_NO_RELAUNCH is set: a stand-in `gemini` records the environment
 * each kind of call gets.
 */
describe("the Gemini CLI runs without relaunching itself", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function standIn(env: Record<string, string> = {}): { agent: Agent; dir: string; seen: () => Record<string, string> } {
    const dir = mkdtempSync(join(tmpdir(), "factory-gemini-env-"));
    dirs.push(dir);
    const bin = join(dir, "gemini");
    const record = join(dir, "env.txt");
    writeFileSync(bin, `#!/bin/sh\nenv > '${record}'\necho 0.0.0-stand-in\n`);
    chmodSync(bin, 0o755);
    const agent: Agent = { name: "gemini", kind: "gemini", bin, run: undefined, env, maxTurns: undefined, args: [], prices: {} };
    const seen = () =>
      Object.fromEntries(
        readFileSync(record, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
    return { agent, dir, seen };
  }

  it("for its --version and for the model probe", async () => {
    const { agent, dir, seen } = standIn();
    expect(await geminiAdapter(agent).version?.()).toBe("0.0.0-stand-in");
    expect(seen().GEMINI_CLI_NO_RELAUNCH).toBe("true");
    rmSync(join(dir, "env.txt"));
    await geminiAdapter(agent).probe?.({ cwd: dir, logFile: join(dir, "probe.log"), model: "gemini-2.5-pro", timeoutMs: 10_000 });
    expect(seen().GEMINI_CLI_NO_RELAUNCH).toBe("true");
  });

  it("unless the agent's env sets it otherwise", async () => {
    const { agent, seen } = standIn({ GEMINI_CLI_NO_RELAUNCH: "" });
    await geminiAdapter(agent).version?.();
    expect(seen().GEMINI_CLI_NO_RELAUNCH).toBe("");
  });
});
