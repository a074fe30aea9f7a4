import type { AgentKind, Config, Tier } from "../config/types.js";

/** The model families each agent CLI serves; a command agent's models are its own affair. */
const FAMILIES: Record<Exclude<AgentKind, "command">, { pattern: RegExp; provider: string }> = {
  claude: { pattern: /^(claude|opus|sonnet|haiku)/i, provider: "Anthropic's" },
  codex: { pattern: /^(gpt|o\d|codex|chatgpt)/i, provider: "OpenAI's" },
  gemini: { pattern: /^(gemini|gemma)/i, provider: "Google's" },
};

/** Pure: why `model` is not one `kind`'s CLI can run (another provider's), or undefined. */
export function foreignModel(kind: AgentKind, model: string): string | undefined {
  if (kind === "command") return undefined;
  const own = FAMILIES[kind];
  if (own.pattern.test(model)) return undefined;
  const other = Object.entries(FAMILIES).find(([name, family]) => name !== kind && family.pattern.test(model));
  return other ? `model "${model}" is ${other[1].provider}, which the ${kind} agent cannot run; name one of ${own.provider} models with --model` : undefined;
}

/**
 * Pure: the tier `factory cut` plans with. `--agent` takes a model of that
 * agent — `--model`, else the model of a tier the config gives that agent —
 * never the named tier's model of another agent.
 */
export function cutTier(
  config: Pick<Config, "tiers" | "agents">,
  named: Tier,
  options: { agent?: string | undefined; model?: string | undefined },
): { ok: true; tier: Tier } | { ok: false; problem: string } {
  const agentName = options.agent ?? named.agent;
  const agent = config.agents[agentName];
  if (!agent) return { ok: false, problem: `no agent "${agentName}" in .factory/config.toml; name one of ${Object.keys(config.agents).join(", ")}` };
  let tier: Tier = { ...named, agent: agentName };
  if (options.model) tier = { ...tier, model: options.model };
  else if (agentName !== named.agent) {
    const own = config.tiers.find((candidate) => candidate.agent === agentName);
    if (!own) return { ok: false, problem: `no tier in .factory/config.toml uses agent "${agentName}", so there is no model of it to plan with; pass --model` };
    tier = { ...tier, model: own.model, estimateUsd: own.estimateUsd, maxCallUsd: own.maxCallUsd };
  }
  const foreign = foreignModel(agent.kind, tier.model);
  return foreign ? { ok: false, problem: `--agent ${agentName}: ${foreign}` } : { ok: true, tier };
}
