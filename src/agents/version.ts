import type { Agent } from "../config/types.js";
import { shellQuote } from "../gates/paths.js";
import { runCommand } from "../process/run.js";
import { agentEnv } from "./env.js";

const versions = new Map<string, Promise<string | undefined>>();

/** An agent CLI's `--version` line, asked once per program and process (`defaults`: variables the agent's own `env` may override). */
export function cliVersion(bin: string, agent: Agent, defaults: Record<string, string> = {}): Promise<string | undefined> {
  let version = versions.get(bin);
  if (!version) {
    version = runCommand({ command: `${shellQuote(bin)} --version`, cwd: process.cwd(), env: { ...defaults, ...agentEnv(agent) }, timeoutMs: 30_000 }).then((outcome) =>
      outcome.kind === "exited" && outcome.code === 0 ? outcome.stdout.trim().split("\n")[0]?.slice(0, 120) || undefined : undefined,
    );
    versions.set(bin, version);
  }
  return version;
}
