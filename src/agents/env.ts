import type { Agent } from "../config/types.js";
import { baseEnv } from "../process/run.js";

/** Provider variables an agent CLI may need: passed through when set, nothing else of the caller's environment is. */
const PROVIDER_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_MODEL",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "AWS_REGION",
  "AWS_PROFILE",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "CLOUD_ML_REGION",
  "ANTHROPIC_VERTEX_PROJECT_ID",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "CODEX_HOME",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GEMINI_BASE_URL",
  "GOOGLE_GENAI_USE_VERTEXAI",
  "GOOGLE_GENAI_USE_GCA",
  "GOOGLE_CLOUD_PROJECT",
  "GOOGLE_CLOUD_LOCATION",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
];

/**
 * The scrubbed environment an agent runs with: an allowlist (DESIGN §7), the
 * provider variables, then the agent's own `env` table from the config,
 * which wins. Secrets of the caller not named here never reach the agent.
 */
export function agentEnv(agent: Agent, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = baseEnv();
  for (const name of PROVIDER_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...agent.env, ...extra };
}
