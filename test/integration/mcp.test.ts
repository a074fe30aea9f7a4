import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN, runCli } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Issue 41 §2: `factory mcp` serves the repository it runs in over stdio, driven here by the SDK's own client
 * as a person's coding agent would: the read-only views give what the CLI's `--json` gives, `draft_packet`
 * writes an untracked packet exactly when `factory cut` would accept it, and a person's commands are refused
 * even when a client names them.
 */
const setUp = useLoopRepos(afterEach);
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function connect(target: LoopRepo): Promise<Client> {
  const client = new Client({ name: "factory-test", version: "1.0.0" });
  const env = Object.fromEntries(Object.entries({ ...process.env, NO_COLOR: "1" }).filter((entry): entry is [string, string] => entry[1] !== undefined));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FACTORY_BIN, "mcp"], cwd: target.dir, env, stderr: "pipe" }));
  clients.push(client);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string => (result.content as { type: string; text: string }[]).map((item) => item.text).join("\n");

const p02 = (spec: string): string =>
  `id = "P02"\ngoal = "Add triple"\nspec_commit = "${spec}"\nspec_path = "docs/SPEC.md"\nallowed_paths = ["src/triple.js"]\nbrief = '''\nAdd src/triple.js exporting triple(n), which returns n * 3.\n'''\n\n[[invariants]]\nid = "triples"\nassert = "triple(n) is n * 3"\n`;

describe("factory mcp", () => {
  it("offers the read-only views with the CLI's JSON, and refuses a person's commands by name", async () => {
    const target = setUp({ packet: `gate = "human"`, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    await target.run();
    const client = await connect(target);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools.sort()).toEqual(["cut", "diff", "draft_packet", "lint", "plan", "report", "show", "status"]);

    const board = JSON.parse(textOf(await client.callTool({ name: "status", arguments: {} })));
    const cli = JSON.parse(runCli(["status", "--json"], target.dir).stdout);
    expect(board.packets).toEqual(cli.packets);
    expect(board.packets[0]).toMatchObject({ id: "P01", state: "awaiting_human" });
    expect(JSON.parse(textOf(await client.callTool({ name: "plan", arguments: {} })))).toEqual(JSON.parse(runCli(["plan", "--json"], target.dir).stdout));
    expect(JSON.parse(textOf(await client.callTool({ name: "lint", arguments: {} })))).toEqual(JSON.parse(runCli(["lint", "--json"], target.dir).stdout));
    expect(JSON.parse(textOf(await client.callTool({ name: "diff", arguments: { id: "P01" } })))).toMatchObject({
      packet: "P01",
      source: "held",
      diff: expect.stringContaining("+export function double(n) {"),
    });
    const shown = JSON.parse(textOf(await client.callTool({ name: "show", arguments: { id: "P01" } })));
    expect(shown).toEqual(JSON.parse(runCli(["show", "P01", "--json"], target.dir).stdout));
    expect(shown).toMatchObject({ packet: "P01", state: "awaiting_human", next: expect.stringContaining("factory approve P01") });
    expect(JSON.parse(textOf(await client.callTool({ name: "report", arguments: {} })))).toMatchObject({ held: [expect.objectContaining({ id: "P01" })] });

    for (const name of ["approve", "reject", "answer", "unblock", "reset", "run"]) {
      const refused = await client.callTool({ name, arguments: { id: "P01", yes: true, reason: "r" } });
      expect(refused.isError, name).toBe(true);
      expect(textOf(refused)).toContain(`factory mcp does not run \`factory ${name}\`: it is a person's command`);
    }
    expect(textOf(await client.callTool({ name: "rm_rf", arguments: {} }))).toContain('factory mcp has no tool "rm_rf"');
    // Nothing a person decides changed.
    expect((await target.record("P01"))?.status.state).toBe("awaiting_human");
    expect(target.subjects().some((subject) => subject.includes("[P01]"))).toBe(false);
  }, 90_000);

  it("draft_packet writes an accepted packet into the checkout untracked, judged as a cut's, and refuses a wrong pin or a planted test that passes at the tip, writing nothing", async () => {
    const target = setUp({ script: {} });
    const client = await connect(target);
    const planted = [{ path: "packets/supplied/P02/test/triple.test.js", content: DOUBLE_TEST_FOR("triple", 2, 6) }];

    const wrongPin = await client.callTool({ name: "draft_packet", arguments: { spec: "docs/SPEC.md", file: "packets/P02-triple.toml", packet: p02("0".repeat(40)), planted } });
    expect(wrongPin.isError).toBeFalsy(); // an answer: refused, with the reason
    expect(textOf(wrongPin)).toContain(`spec_commit is "${"0".repeat(40)}", not the full sha of the spec's last commit (${target.spec})`);
    expect(existsSync(join(target.dir, "packets/P02-triple.toml"))).toBe(false);

    const passing = await client.callTool({
      name: "draft_packet",
      arguments: {
        spec: "docs/SPEC.md",
        file: "packets/P02-triple.toml",
        packet: p02(target.spec),
        planted: [{ path: planted[0]?.path, content: 'import test from "node:test";\ntest("nothing", () => {});\n' }],
      },
    });
    expect(textOf(passing), textOf(passing)).toMatch(/P02 refused:[\s\S]*none fails before the work: plant a test that fails without the change/);
    expect(existsSync(join(target.dir, "packets/P02-triple.toml"))).toBe(false);

    const accepted = await client.callTool({ name: "draft_packet", arguments: { spec: "docs/SPEC.md", file: "packets/P02-triple.toml", packet: p02(target.spec), planted } });
    expect(accepted.isError, textOf(accepted)).toBeFalsy();
    expect(textOf(accepted)).toContain("Written into your checkout, untracked: packets/P02-triple.toml");
    expect(target.read("packets/P02-triple.toml")).toBe(p02(target.spec));
    expect(target.read("packets/supplied/P02/test/triple.test.js")).toBe(planted[0]?.content);
    expect(target.git("status", "--porcelain", "--untracked-files=all", "packets/").trim().split("\n").sort()).toEqual(["?? packets/P02-triple.toml", "?? packets/supplied/P02/test/triple.test.js"]);
    // Nothing queued until a person commits it; a second draft never writes over the first.
    expect(JSON.parse(runCli(["status", "--json"], target.dir).stdout).packets.map((row: { id: string }) => row.id)).toEqual(["P01"]);
    const again = await client.callTool({ name: "draft_packet", arguments: { spec: "docs/SPEC.md", file: "packets/P02-triple.toml", packet: p02(target.spec), planted } });
    expect(textOf(again)).toContain("packets/P02-triple.toml exists in your checkout; nothing of yours is overwritten");
    expect((await client.callTool({ name: "draft_packet", arguments: { spec: "docs/SPEC.md", file: "../evil.toml", packet: "x" } })).isError).toBe(true);
  }, 90_000);
});
