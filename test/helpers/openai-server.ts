import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted stand-in for the OpenAI Responses API on 127.0.0.1, so the real
 * Codex CLI does real work: each session replays scripted turns (shell
 * commands through Codex's exec_command tool, or a final message), streamed
 * as server-sent events like the API.
 */
export interface CodexTurn {
  text?: string;
  /** Shell commands, run by Codex in the worktree. */
  commands?: string[];
  http?: { status: number; message: string; type?: string; code?: string };
}

export interface CodexScript {
  implementer?: CodexTurn[][];
  reviewer?: CodexTurn[][];
}

export interface OpenAIServer {
  url: string;
  roles: string[];
  close(): Promise<void>;
}

export async function startOpenAIServer(script: CodexScript): Promise<OpenAIServer> {
  const queues = { implementer: [...(script.implementer ?? [])], reviewer: [...(script.reviewer ?? [])] };
  const sessions = new Map<string, { turns: CodexTurn[]; next: number }>();
  const roles: string[] = [];
  let ids = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== "POST" || !req.url?.endsWith("/responses")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      const request = JSON.parse(body) as { model: string; input: unknown[] };
      const sessionId = String(req.headers["session-id"] ?? `anon-${++ids}`);
      let session = sessions.get(sessionId);
      if (!session) {
        const role = JSON.stringify(request.input).includes("# Review of task") ? "reviewer" : "implementer";
        roles.push(role);
        session = { turns: queues[role].shift() ?? [], next: 0 };
        sessions.set(sessionId, session);
      }
      const turn = session.turns[session.next++] ?? { text: "Done." };
      if (turn.http) {
        res.writeHead(turn.http.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: turn.http.message, type: turn.http.type ?? "invalid_request_error", code: turn.http.code ?? null } }));
        return;
      }
      respond(res, turn, request.model, ++ids);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    roles,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function respond(res: ServerResponse, turn: CodexTurn, model: string, id: number): void {
  const items = [
    ...(turn.commands ?? []).map((cmd, index) => ({
      id: `fc_${id}_${index}`,
      type: "function_call",
      status: "completed",
      call_id: `call_${id}_${index}`,
      name: "exec_command",
      arguments: JSON.stringify({ cmd }),
    })),
    ...(turn.text !== undefined || !turn.commands?.length
      ? [{ id: `msg_${id}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text ?? "Done.", annotations: [] }] }]
      : []),
  ];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (data: { type: string } & Record<string, unknown>): void => void res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
  const response = { id: `resp_${id}`, object: "response", model, output: [] as unknown[] };
  send({ type: "response.created", response: { ...response, status: "in_progress" } });
  items.forEach((item, index) => {
    send({ type: "response.output_item.added", output_index: index, item });
    send({ type: "response.output_item.done", output_index: index, item });
  });
  send({
    type: "response.completed",
    response: {
      ...response,
      status: "completed",
      output: items,
      usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 200 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1100 },
    },
  });
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => resolve(body));
  });
}
