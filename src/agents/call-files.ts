import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SandboxRequest } from "../process/sandbox.js";
import type { AgentRequest } from "./types.js";

/**
 * Where one agent call keeps its prompt and raw output in the attempt's run
 * directory (a correction round and a call repeated after a rate limit get
 * their own names, so nothing is overwritten); writes the prompt file.
 */
export function prepareCallFiles(request: AgentRequest, rawName: string): { promptFile: string; rawPath: string } {
  const stem = `${request.role}${request.round > 0 ? `-correction-${request.round}` : ""}${request.repeat ? `-repeat-${request.repeat}` : ""}`;
  const promptFile = join(request.runDir, `${stem}-prompt.md`);
  writeFileSync(promptFile, request.prompt);
  return { promptFile, rawPath: join(request.runDir, `${stem}-${rawName}`) };
}

/** Pure: the JSON objects of a JSON-lines stream; other lines (a crash's stack trace, log noise) are skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === "object" && value !== null && !Array.isArray(value)) events.push(value as Record<string, unknown>);
    } catch {
      // not a JSON line
    }
  }
  return events;
}

/** `{ sandbox }` for an agent CLI's run request: the call's sandbox plus what this CLI needs from HOME and the run directory. */
export function agentSandbox(request: AgentRequest, needs: { homeSeed?: readonly string[]; readable?: string[] }): { sandbox?: SandboxRequest } {
  if (!request.sandbox) return {};
  return {
    sandbox: {
      ...request.sandbox,
      homeSeed: [...(request.sandbox.homeSeed ?? []), ...(needs.homeSeed ?? [])],
      readable: [...(request.sandbox.readable ?? []), ...(needs.readable ?? [])],
    },
  };
}
