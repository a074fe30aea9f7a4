import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { modelMatches } from "../agents/claude-stream.js";
import { agentEnv } from "../agents/env.js";
import { providerUnreachable } from "../agents/provider-reach.js";
import { agentProgram } from "../agents/shell-program.js";
import type { AgentAdapter } from "../agents/types.js";
import { type Config, UNKNOWN_COST_ESTIMATE_USD } from "../config/types.js";
import { RUNS_DIR } from "./context.js";

/** One probe call's spend: what it reported, or (unknown) the tier's estimate, never $0. */
export interface ProbeSpend {
  agent: string;
  model: string;
  costUsd?: number;
  estimatedUsd?: number;
}

export interface PreflightResult {
  refusals: string[];
  spends: ProbeSpend[];
  /** A line for each tier whose model answered as configured. */
  answered: string[];
}

/**
 * Before anything is spent on a packet: each tier the queue uses, on an agent
 * that can be probed, answers one tiny prompt, and the model that actually
 * answered must be the configured one (a tier that silently falls back to
 * another model is refused, naming both).
 */
export async function checkModels(input: { root: string; config: Config; tiers: ReadonlySet<string>; adapters: ReadonlyMap<string, AgentAdapter> }): Promise<PreflightResult> {
  const refusals: string[] = [];
  const spends: ProbeSpend[] = [];
  const answered: string[] = [];
  const probed = new Map<string, string | undefined>();
  const dir = join(input.root, RUNS_DIR, "preflight");
  mkdirSync(dir, { recursive: true });
  for (const tier of input.config.tiers.filter((candidate) => input.tiers.has(candidate.name))) {
    const adapter = input.adapters.get(tier.agent);
    if (!adapter?.probe) continue;
    const key = `${tier.agent}\u0000${tier.model}`;
    if (!probed.has(key)) {
      // A provider that cannot be connected to is said in seconds, in the network's words (the CLI would retry for minutes).
      const agent = input.config.agents[tier.agent];
      const unreachable = agent ? await providerUnreachable(agent.kind, agentEnv(agent)) : undefined;
      const result = unreachable
        ? ({ ok: false, reason: unreachable } as const)
        : await adapter.probe({ model: tier.model, cwd: input.root, logFile: join(dir, `${tier.agent}-${tier.model.replaceAll("/", "_")}.jsonl`), timeoutMs: 120_000 });
      if (!result.ok) {
        probed.set(key, `tier "${tier.name}" (agent ${tier.agent}, model ${tier.model}): the preflight call failed: ${result.reason}`);
      } else {
        const believed = result.costUsd !== undefined && Number.isFinite(result.costUsd) && result.costUsd >= 0;
        spends.push({ agent: tier.agent, model: tier.model, ...(believed ? { costUsd: result.costUsd } : { estimatedUsd: tier.estimateUsd ?? UNKNOWN_COST_ESTIMATE_USD }) });
        const foreign = result.models.filter((model) => !modelMatches(tier.model, model));
        probed.set(
          key,
          foreign.length ? `tier "${tier.name}" is configured with model ${tier.model}, but ${foreign.join(", ")} answered (agent ${tier.agent}); fix the tier or the agent's setup` : undefined,
        );
      }
    }
    const refusal = probed.get(key);
    if (refusal) refusals.push(refusal.startsWith("tier") ? refusal : `tier "${tier.name}": ${refusal}`);
    else answered.push(`tier "${tier.name}": model ${tier.model} (agent ${tier.agent}) answered as configured`);
  }
  return { refusals, spends, answered };
}

/**
 * Before anything is claimed: the program each agent the queue uses starts
 * with (`bin` for the CLI kinds, the program `run` starts for a command agent)
 * must exist, on PATH or at the path given. A missing binary is a refusal,
 * not an attempt spent and a packet blocked within seconds.
 */
export function missingAgentPrograms(input: { config: Config; agents: ReadonlySet<string>; path: string | undefined; root: string }): string[] {
  const refusals: string[] = [];
  for (const name of input.agents) {
    const agent = input.config.agents[name];
    if (!agent) continue;
    // Found the way `sh -c` will find it: past assignments, exec, env and cd steps (`FOO=1 node agent.mjs`).
    const program = agentProgram(agent);
    if (program === undefined || findProgram(program, input.path, input.root)) continue;
    const key = agent.kind === "command" ? "run" : "bin";
    refusals.push(`agent "${name}": its program "${program}" was not found ${program.includes("/") ? "at that path" : "on PATH"}; install it, or fix [agents.${name}] ${key} in .factory/config.toml`);
  }
  return refusals;
}

export function findProgram(program: string, path: string | undefined, root: string): boolean {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return executable(isAbsolute(program) ? program : join(root, program));
  return (path ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, program)));
}
