import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startAnthropicServer } from "../helpers/anthropic-server.js";
import { FACTORY_BIN } from "../helpers/cli.js";
import { useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Issue 41 §2, once with a real agent: Claude Code (the npm package, run for real) against a scripted model
 * server calls the factory's `status` tool through `factory mcp`, and what the tool returned is what the
 * factory's board says.
 */
const CLAUDE = fileURLToPath(new URL("../../agent-clis/node_modules/.bin/claude", import.meta.url));
const available = existsSync(CLAUDE);
if (!available) console.warn(`skipping the MCP test with Claude Code: ${CLAUDE} is not installed (npm test installs it: node scripts/agent-clis.mjs)`);

const setUp = useLoopRepos(afterEach);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.skipIf(!available)("factory mcp with Claude Code", () => {
  it("the agent calls status through MCP and gets the board", async () => {
    const server = await startAnthropicServer({ implementer: [[{ tools: [{ name: "mcp__factory__status", input: {} }] }, { text: "P01 is queued." }]] });
    const home = mkdtempSync(join(tmpdir(), "factory-mcp-home-"));
    cleanups.push(
      () => server.close(),
      () => rmSync(home, { recursive: true, force: true }),
    );
    const target = setUp({ script: {} });
    // The command the guide gives, run as it says: `factory` on the PATH (as `npm link` puts it), `claude mcp add` run
    // from the repository; then a plain `claude -p` there uses it.
    const guide = readFileSync(fileURLToPath(new URL("../../docs/guides/people-and-tools.md", import.meta.url)), "utf8");
    const given = /^(claude mcp add factory -- .+?)\s+#/m.exec(guide)?.[1];
    expect(given).toBe("claude mcp add factory -- factory mcp");
    const bin = join(home, "bin");
    mkdirSync(bin);
    symlinkSync(FACTORY_BIN, join(bin, "factory"));
    const path = `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
    const added = spawnSync(CLAUDE, (given ?? "").split(" ").slice(1), { cwd: target.dir, env: { ...process.env, HOME: home, PATH: path }, encoding: "utf8" });
    expect(added.status, `${added.stdout}${added.stderr}`).toBe(0);
    const args = ["-p", "What is the state of the factory's queue?", "--allowedTools", "mcp__factory__status", "--output-format", "json", "--model", "claude-sonnet-4-5"];
    const env = { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-test-not-a-key", HOME: home, NO_COLOR: "1", PATH: path };
    const child = spawn(CLAUDE, args, { cwd: target.dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += String(chunk)));
    child.stderr.on("data", (chunk) => (out += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, out).toBe(0);
    // The model's second request carries the tool's result: the board as `factory status --json` has it.
    const answered = server.requests.find((request) => request.last.includes("tool_result"));
    expect(answered?.last, JSON.stringify(server.requests)).toBeDefined();
    const result = JSON.parse(answered?.last ?? "[]") as { type: string; content?: { type: string; text: string }[] | string }[];
    const toolResult = result.find((block) => block.type === "tool_result");
    const text = Array.isArray(toolResult?.content) ? toolResult.content.map((part) => part.text).join("") : String(toolResult?.content ?? "");
    // Claude Code appends reminders of its own after a tool's text.
    expect(JSON.parse(text.split("\n<system-reminder>")[0] ?? "")).toMatchObject({ schema: 1, branch: "main", packets: [expect.objectContaining({ id: "P01", state: "queued" })] });
    expect(out).toContain("P01 is queued.");
  }, 120_000);
});
