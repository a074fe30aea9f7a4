import type { Agent } from "../config/types.js";
import { claudeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { commandAdapter } from "./command.js";
import { geminiAdapter } from "./gemini.js";
import type { AgentAdapter } from "./types.js";

export type AdapterLookup = { ok: true; adapter: AgentAdapter } | { ok: false; reason: string };

/** The adapter for an agent instance. */
export function adapterFor(agent: Agent): AdapterLookup {
  switch (agent.kind) {
    case "command":
      return { ok: true, adapter: commandAdapter(agent) };
    case "claude":
      return { ok: true, adapter: claudeAdapter(agent) };
    case "codex":
      return { ok: true, adapter: codexAdapter(agent) };
    case "gemini":
      return { ok: true, adapter: geminiAdapter(agent) };
  }
}
