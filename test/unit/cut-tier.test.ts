import { describe, expect, it } from "vitest";
import type { Agent, Tier } from "../../src/config/types.js";
import { cutTier, foreignModel } from "../../src/planning/cut-tier.js";

const tier = (name: string, agent: string, model: string): Tier => ({ name, agent, model, estimateUsd: undefined, maxCallUsd: undefined });
const agents = {
  claude: { name: "claude", kind: "claude" },
  gemini: { name: "gemini", kind: "gemini" },
  script: { name: "script", kind: "command" },
} as unknown as Record<string, Agent>;
const advanced = tier("advanced", "gemini", "gemini-2.5-pro");
const config = { agents, tiers: [tier("standard", "claude", "claude-sonnet-4-5"), advanced] };

describe("the tier factory cut plans with", () => {
  it("--agent takes the model of a tier that uses that agent, never the named tier's model of another agent", () => {
    expect(cutTier(config, advanced, { agent: "claude" })).toEqual({ ok: true, tier: { ...advanced, agent: "claude", model: "claude-sonnet-4-5" } });
    expect(cutTier(config, advanced, {})).toEqual({ ok: true, tier: advanced });
  });

  it("--model names the model; one of another provider is refused, naming both", () => {
    expect(cutTier(config, advanced, { agent: "claude", model: "claude-opus-4-1" })).toMatchObject({ ok: true, tier: { agent: "claude", model: "claude-opus-4-1" } });
    expect(cutTier(config, advanced, { agent: "claude", model: "gemini-2.5-pro" })).toEqual({
      ok: false,
      problem: `--agent claude: model "gemini-2.5-pro" is Google's, which the claude agent cannot run; name one of Anthropic's models with --model`,
    });
  });

  it("an agent no tier uses needs --model; an unknown agent is named", () => {
    const only = { agents, tiers: [advanced] };
    expect(cutTier(only, advanced, { agent: "claude" })).toMatchObject({ ok: false, problem: expect.stringContaining('no tier in .factory/config.toml uses agent "claude"') });
    expect(cutTier(only, advanced, { agent: "nobody" })).toMatchObject({ ok: false, problem: expect.stringContaining('no agent "nobody"') });
    // A command agent's models are its own: anything goes.
    expect(foreignModel("command", "gemini-2.5-pro")).toBeUndefined();
    expect(foreignModel("codex", "gpt-5-codex")).toBeUndefined();
    expect(foreignModel("codex", "claude-sonnet-4-5")).toContain("Anthropic's");
  });
});
