import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { DOUBLE_JS, SCRIPTED_AGENT, useLoopRepos } from "../helpers/loop-repo.js";
import { useTemporaryHome } from "../helpers/temporary-home.js";

/** A command agent as users write it: any shell form, a program by path under HOME; a program that cannot start is the machine's. */
const setUp = useLoopRepos(afterEach);
const home = useTemporaryHome(beforeEach, afterEach, "agent");

const honest = { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } };
const tiers = (agent: string) => `[tiers]\nstandard = { agent = "${agent}", model = "m" }\nadvanced = { agent = "${agent}", model = "m" }`;

/**
 * The scripted agent copied into the repository's git directory, which the sandbox shows: a wrapper names
 * it inside itself, where the sandbox cannot see it, and the package may be checked out under /tmp, which
 * the sandbox empties.
 */
function visibleAgent(repo: string): string {
  const copy = join(repo, ".git", "scripted-agent.mjs");
  copyFileSync(SCRIPTED_AGENT, copy);
  return copy;
}

describe("a command agent's run line", () => {
  it("may start with assignments and cd steps, as a shell command: the preflight finds the program the shell will run, and the packet merges", async () => {
    const target = setUp({ script: honest, agents: "" });
    const config = target
      .read(".factory/config.toml")
      .replace("[limits]", `[agents.shell]\nkind = "command"\nrun = "FOO=1 cd . && exec node ${SCRIPTED_AGENT} ${target.scriptFile}"\n${tiers("shell")}\n\n[limits]`);
    target.write(".factory/config.toml", config);
    target.commit("a shell-form agent");
    const { code, out } = await target.run();
    expect(out).not.toContain("was not found");
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });

  it("may name its program by a path under HOME: it is visible inside the sandbox, read-only, and the packet merges", async () => {
    const program = join(home, "agents", "my-agent");
    mkdirSync(join(home, "agents"), { recursive: true });
    const target = setUp({ script: honest, agents: "" });
    writeFileSync(program, `#!/bin/sh\nexec node ${visibleAgent(target.dir)} ${target.scriptFile}\n`);
    chmodSync(program, 0o755);
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace("[limits]", `[agents.mine]\nkind = "command"\nrun = "${program}"\n${tiers("mine")}\n\n[limits]`));
    target.commit("an agent under HOME");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });

  it("directly in HOME is visible alone: the rest of the real HOME (a token beside it) stays hidden", async () => {
    const program = join(home, "my-agent");
    writeFileSync(join(home, "secret-token"), "sk-do-not-leak\n");
    const target = setUp({ script: {}, agents: "" });
    writeFileSync(program, `#!/bin/sh\nexec node ${visibleAgent(target.dir)} ${target.scriptFile}\n`);
    chmodSync(program, 0o755);
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: `(cat ${home}/secret-token >> src/double.js) 2>/dev/null || true` }] } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace("[limits]", `[agents.mine]\nkind = "command"\nrun = "${program}"\n${tiers("mine")}\n\n[limits]`));
    target.commit("an agent directly in HOME");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.read("src/double.js")).toBe(DOUBLE_JS);
  });

  it("that cannot start inside the sandbox (exit 127) is an environment error: no attempt spent, no cost counted", async () => {
    // The preflight finds the program; its interpreter is not there, so the shell cannot start it (exit 127).
    const outside = mkdtempSync(join(tmpdir(), "factory-unstartable-agent-"));
    onTestFinished(() => rmSync(outside, { recursive: true, force: true }));
    const program = join(outside, "my-agent");
    writeFileSync(program, `#!/no/such/interpreter\nexec node ${SCRIPTED_AGENT} "$@"\n`);
    chmodSync(program, 0o755);
    const target = setUp({ script: honest, agents: "" });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace("[limits]", `[agents.gone]\nkind = "command"\nrun = "${program}"\n${tiers("gone")}\n\n[limits]`));
    target.commit("an agent that cannot start");
    const { code, out } = await target.run();
    expect(out).toMatch(/implementer's program could not start inside the sandbox/);
    expect(out).toContain("two environment errors in a row");
    expect(code).toBe(1);
    const events = await target.events("P01");
    const finished = events.filter((event) => event.kind === "agent-finished");
    expect(finished.length).toBeGreaterThan(0);
    for (const event of finished) expect(event.kind === "agent-finished" && event.estimatedUsd).toBeFalsy();
    expect((await target.record("P01"))?.attemptsUsed).toBe(0);
  });

  it("a Claude Code whose program cannot start inside the sandbox is an environment error too: no attempt spent, no cost counted", async () => {
    // It answers the preflight outside the sandbox; its interpreter lives under /tmp, which the sandbox empties, so inside it the shell cannot start it.
    const outside = mkdtempSync(join(tmpdir(), "factory-unstartable-claude-"));
    const shells = mkdtempSync(join(tmpdir(), "factory-interpreter-"));
    onTestFinished(() => {
      rmSync(outside, { recursive: true, force: true });
      rmSync(shells, { recursive: true, force: true });
    });
    copyFileSync("/bin/sh", join(shells, "sh"));
    chmodSync(join(shells, "sh"), 0o755);
    const program = join(outside, "claude");
    const init = JSON.stringify({ type: "system", subtype: "init", session_id: "s", model: "claude-sonnet-4-5" });
    const result = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "ready", session_id: "s", total_cost_usd: 0.001, modelUsage: { "claude-sonnet-4-5": {} } });
    writeFileSync(program, `#!${join(shells, "sh")}\n[ "$1" = --version ] && { echo "2.0.0 (Claude Code)"; exit 0; }\ncat >/dev/null\necho '${init}'\necho '${result}'\n`);
    chmodSync(program, 0o755);
    const target = setUp({ script: honest, agents: "" });
    const agent = `[agents.claude]\nkind = "claude"\nbin = "${program}"\n[tiers]\nstandard = { agent = "claude", model = "claude-sonnet-4-5" }\nadvanced = { agent = "claude", model = "claude-sonnet-4-5" }`;
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace("[limits]", `${agent}\n\n[limits]`));
    target.commit("a Claude Code that cannot start in the sandbox");
    const { code, out } = await target.run();
    expect(out).toMatch(/implementer's program could not start inside the sandbox/);
    expect(code).toBe(1);
    const finished = (await target.events("P01")).filter((event) => event.kind === "agent-finished");
    expect(finished.length).toBeGreaterThan(0);
    for (const event of finished) expect(event.kind === "agent-finished" && (event.estimatedUsd || event.costUsd)).toBeFalsy();
    expect((await target.record("P01"))?.attemptsUsed).toBe(0);
  });

  it("that started and then exited 127 has failed its attempt: the run goes on, the attempt is spent", async () => {
    const target = setUp({ script: { P01: { implementer: [{ exit: 127 }, { write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(out).not.toMatch(/could not start/);
    expect(out).not.toContain("two environment errors in a row");
    expect(out).toMatch(/exited with code 127/);
    expect(out).toContain("P01#2 → merged");
    expect(code).toBe(0);
    expect((await target.record("P01"))?.attemptsUsed).toBe(2);
  });
});
