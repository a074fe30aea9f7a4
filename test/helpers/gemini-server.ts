import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted stand-in for the Gemini API (`generativelanguage` v1beta) on
 * 127.0.0.1, so the real Gemini CLI does real work: each session replays
 * scripted turns (function calls of the CLI's own tools, or a final text),
 * streamed as server-sent events like the API. The CLI is pointed at it with
 * GOOGLE_GEMINI_BASE_URL.
 */
export interface GeminiTurn {
  text?: string;
  /** Tool calls, e.g. `{ name: "write_file", args: { file_path, content } }` or `run_shell_command`. */
  calls?: { name: string; args: Record<string, unknown> }[];
  /** An API error instead of an answer (e.g. 429 RESOURCE_EXHAUSTED). */
  http?: { status: number; message: string; status_text?: string; details?: unknown[] };
}

export interface GeminiScript {
  implementer?: GeminiTurn[][];
  reviewer?: GeminiTurn[][];
}

export interface GeminiServer {
  url: string;
  /** One entry per session the CLI opened: its role and whether it continued an earlier conversation (`--resume`). */
  sessions: { role: string; resumed: boolean }[];
  close(): Promise<void>;
}

interface Content {
  role: string;
  parts: { text?: string; functionResponse?: unknown }[];
}

export async function startGeminiServer(script: GeminiScript): Promise<GeminiServer> {
  const queues = { implementer: [...(script.implementer ?? [])], reviewer: [...(script.reviewer ?? [])] };
  const sessions = new Map<string, { turns: GeminiTurn[]; served: number }>();
  const opened: { role: string; resumed: boolean }[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== "POST" || !req.url?.includes(":streamGenerateContent")) {
        json(res, 200, { candidates: [{ content: { role: "model", parts: [{ text: "{}" }] }, finishReason: "STOP", index: 0 }], totalTokens: 1 });
        return;
      }
      const contents = (JSON.parse(body) as { contents: Content[] }).contents;
      if (JSON.stringify(contents).includes("Reply with the single word: ready")) {
        stream(res, req.url, [{ text: "ready" }]); // the factory's model preflight: no script spent on it
        return;
      }
      // A session is keyed by the last message a person (the factory) wrote; the turn is the number of model answers since.
      const promptAt = contents.findLastIndex((content) => content.role === "user" && content.parts.some((part) => part.text !== undefined && part.functionResponse === undefined));
      const key = JSON.stringify(contents[promptAt]?.parts ?? []);
      const index = contents.slice(promptAt).filter((content) => content.role === "model").length;
      let session = sessions.get(key);
      // The same prompt asking for its first answer again is a new process (a call repeated after a rate limit).
      if (!session || (index === 0 && session.served > 0)) {
        const role = JSON.stringify(contents).includes("# Review of task") ? "reviewer" : "implementer";
        opened.push({ role, resumed: contents.slice(0, promptAt).some((content) => content.role === "model") });
        session = { turns: queues[role].shift() ?? [], served: 0 };
        sessions.set(key, session);
      }
      session.served++;
      const turn = session.turns[index] ?? { text: "Done." };
      if (turn.http) {
        json(res, turn.http.status, { error: { code: turn.http.status, message: turn.http.message, status: turn.http.status_text ?? "INVALID_ARGUMENT", details: turn.http.details ?? [] } });
        return;
      }
      stream(res, req.url, turn.calls?.length ? turn.calls.map((call) => ({ functionCall: call })) : [{ text: turn.text ?? "Done." }]);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions: opened,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One answer as the API streams it, with the model the request named and fixed usage: 1000 input (200 cached) and 100 output tokens. */
function stream(res: ServerResponse, url: string, parts: unknown[]): void {
  const chunk = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: 100, totalTokenCount: 1100, cachedContentTokenCount: 200 },
    modelVersion: /models\/([^:]+):/.exec(url)?.[1] ?? "unknown",
  };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(`data: ${JSON.stringify(chunk)}\n\n`);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => resolve(body));
  });
}
