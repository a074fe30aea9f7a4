import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { EXIT, type ExitCode } from "../commands/exit-codes.js";
import { bufferOutput } from "../log/output.js";
import { refusal, TOOLS } from "./tools.js";

type Args = Record<string, unknown>;
type ToolResult = { content: { type: "text"; text: string }[]; isError?: boolean };

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Runs one of the CLI's commands in this process, its output captured: what `factory <name>` would print. */
async function call(name: string, args: Args, cwd: string, signal: AbortSignal): Promise<ToolResult> {
  const output = bufferOutput();
  const need = (key: string): string => {
    const value = text(args[key]);
    if (value === undefined || value.trim() === "") throw new ToolInputError(`"${key}" is required`);
    return value;
  };
  let code: ExitCode;
  switch (name) {
    case "status":
      code = await (await import("../commands/status.js")).status({ cwd, id: text(args.id), json: true, output });
      break;
    case "show":
      code = await (await import("../commands/show.js")).show({ cwd, id: need("id"), output, json: true });
      break;
    case "plan":
      code = await (await import("../commands/plan.js")).plan({ cwd, json: true, output });
      break;
    case "lint":
      code = await (await import("../commands/lint.js")).lint({ cwd, ids: Array.isArray(args.ids) ? args.ids.map(String) : [], json: true, output });
      break;
    case "diff":
      code = await (await import("../commands/diff.js")).diff({ cwd, id: need("id"), output, json: true });
      break;
    case "report":
      code = await (await import("../commands/report.js")).report({ cwd, ...(text(args.since) ? { since: text(args.since) } : {}), json: true, output });
      break;
    case "draft_packet": {
      const planted = Array.isArray(args.planted) ? args.planted.map((entry) => ({ path: String((entry as Args).path), content: String((entry as Args).content) })) : [];
      code = (await (await import("../commands/draft.js")).draft({ cwd, spec: need("spec"), file: need("file"), packet: need("packet"), planted, output, signal })).code;
      break;
    }
    case "cut":
      code = await (await import("../commands/cut.js")).cut({ cwd, spec: need("spec"), scope: need("scope"), scopeFile: undefined, tier: text(args.tier), agent: undefined, output, signal });
      break;
    default:
      throw new ToolInputError(refusal(name) ?? `no tool "${name}"`);
  }
  const said = output.stdout.join("\n");
  const warned = output.stderr.join("\n");
  return {
    content: [{ type: "text", text: said || warned || `(factory ${name} printed nothing; exit ${code})` }, ...(said && warned ? [{ type: "text" as const, text: warned }] : [])],
    // Exit 1 is an answer (lint found problems, a draft was refused); 2 and above: the call itself failed.
    ...(code !== EXIT.ok && code !== EXIT.halted ? { isError: true } : {}),
  };
}

class ToolInputError extends Error {}

/** The MCP server over stdio for the repository at `cwd`; resolves when the client closes the connection. */
export async function serveMcp(cwd: string, version: string): Promise<void> {
  const server = new Server({ name: "factory", version }, { capabilities: { tools: {} } });
  const controller = new AbortController();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map((tool) => ({ ...tool })) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const name = request.params.name;
    const refused = refusal(name);
    if (refused) return { content: [{ type: "text", text: refused }], isError: true };
    try {
      return await call(name, request.params.arguments ?? {}, cwd, controller.signal);
    } catch (error) {
      if (error instanceof ToolInputError) return { content: [{ type: "text", text: `${name}: ${error.message}` }], isError: true };
      throw error;
    }
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  process.stdin.once("end", () => void server.close()); // the client went away
  await closed;
  controller.abort();
}
