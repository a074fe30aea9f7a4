import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, so the
 * real Claude Code binary does real work in a real worktree: each session
 * replays a conversation of scripted assistant turns (text and tool calls),
 * streamed as server-sent events exactly like the API.
 */
export interface Turn {
  text?: string;
  /** Tool calls; string values may use {cwd}, the session's working directory. */
  tools?: { name: string; input: Record<string, unknown> }[];
  /** Answer with this HTTP error instead (e.g. 429 with retry-after). */
  http?: { status: number; type: string; message: string; headers?: Record<string, string> };
  /** Never answer. */
  hang?: boolean;
  /** The model the response claims to be, when not the requested one. */
  model?: string;
}

export interface ModelScript {
  implementer?: Turn[][];
  reviewer?: Turn[][];
  /** New sessions of the contract-correction round. */
  correction?: Turn[][];
  /** The preflight call; default: "ready". */
  probe?: Turn[][];
  /** `factory cut`'s planner and `factory assess`'s assessor. */
  planner?: Turn[][];
  assessor?: Turn[][];
}

type Role = keyof ModelScript;

export interface RecordedRequest {
  role: Role;
  session: string;
  model: string;
  messages: number;
  /** The request's last message, as JSON (a tool's result comes back in it). */
  last: string;
}

export interface AnthropicServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startAnthropicServer(script: ModelScript): Promise<AnthropicServer> {
  const queues: Record<Role, Turn[][]> = {
    implementer: [...(script.implementer ?? [])],
    reviewer: [...(script.reviewer ?? [])],
    correction: [...(script.correction ?? [])],
    probe: [...(script.probe ?? [])],
    planner: [...(script.planner ?? [])],
    assessor: [...(script.assessor ?? [])],
  };
  const sessions = new Map<string, { role: Role; turns: Turn[]; next: number; cwd: string }>();
  const requests: RecordedRequest[] = [];
  let ids = 0;

  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(req.url?.includes("count_tokens") ? JSON.stringify({ input_tokens: 10 }) : "{}");
        return;
      }
      const request = JSON.parse(body) as { model: string; stream?: boolean; messages: { role: string; content: unknown }[] };
      const sessionId = String(req.headers["x-claude-code-session-id"] ?? `anon-${++ids}`);
      let session = sessions.get(sessionId);
      if (!session) {
        const text = JSON.stringify(request.messages[0]?.content ?? "");
        const role: Role = text.includes("Reply with the single word: ready")
          ? "probe"
          : text.includes("# Review of task")
            ? "reviewer"
            : text.includes("was not usable")
              ? "correction"
              : text.includes("# Cut packets from a spec")
                ? "planner"
                : text.includes("# Assessment of task packet")
                  ? "assessor"
                  : "implementer";
        const cwd = /Primary working directory: ([^\s\\]+)/.exec(text)?.[1] ?? "/nonexistent";
        session = { role, turns: queues[role].shift() ?? [], next: 0, cwd };
        sessions.set(sessionId, session);
      }
      requests.push({ role: session.role, session: sessionId, model: request.model, messages: request.messages.length, last: JSON.stringify(request.messages.at(-1)?.content ?? "") });
      const turn = session.turns[session.next++] ?? { text: session.role === "probe" ? "ready" : "Done." };
      if (turn.hang) return; // the connection stays open until the client gives up or is killed
      if (turn.http) {
        res.writeHead(turn.http.status, { "content-type": "application/json", ...turn.http.headers });
        res.end(JSON.stringify({ type: "error", error: { type: turn.http.type, message: turn.http.message } }));
        return;
      }
      respond(res, turn, request, session.cwd, ++ids);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function respond(res: ServerResponse, turn: Turn, request: { model: string; stream?: boolean }, cwd: string, id: number): void {
  const model = turn.model ?? request.model;
  const blocks = [
    ...(turn.text !== undefined ? [{ type: "text", text: turn.text }] : []),
    ...(turn.tools ?? []).map((tool, index) => ({ type: "tool_use", id: `toolu_${id}_${index}`, name: tool.name, input: withCwd(tool.input, cwd) })),
  ];
  const stopReason = turn.tools?.length ? "tool_use" : "end_turn";
  const usage = { input_tokens: 100, output_tokens: 20 };
  if (!request.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: `msg_${id}`, type: "message", role: "assistant", model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (event: string, data: object): void => void res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send("message_start", {
    message: { id: `msg_${id}`, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: (block as { text: string }).text } });
    } else {
      const { input, ...rest } = block as { input: unknown };
      send("content_block_start", { index, content_block: { ...rest, input: {} } });
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } });
    }
    send("content_block_stop", { index });
  });
  send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send("message_stop", {});
  res.end();
}

function withCwd(value: unknown, cwd: string): unknown {
  if (typeof value === "string") return value.replaceAll("{cwd}", cwd);
  if (Array.isArray(value)) return value.map((item) => withCwd(item, cwd));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withCwd(item, cwd)]));
  return value;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => resolve(body));
  });
}
