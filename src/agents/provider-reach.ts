import { connect } from "node:net";
import type { AgentKind } from "../config/types.js";

/** The variable each CLI kind reads its provider's base URL from. */
const BASE_URL_VARIABLE: Partial<Record<AgentKind, string>> = {
  claude: "ANTHROPIC_BASE_URL",
  codex: "OPENAI_BASE_URL",
  gemini: "GOOGLE_GEMINI_BASE_URL",
};

const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/** How long a connection to the provider may take before it counts as unreachable. */
export const REACH_TIMEOUT_MS = 5_000;

/**
 * Pure: the address to try for an agent's provider, or undefined when there
 * is nothing the factory can check itself: no base URL configured (the CLI's
 * own default, which may be reached through a proxy or a login), or a
 * non-local host while a proxy is configured (the CLI goes through the proxy).
 */
export function providerAddress(kind: AgentKind, env: Readonly<Record<string, string | undefined>>): { variable: string; url: string; host: string; port: number } | undefined {
  const variable = BASE_URL_VARIABLE[kind];
  const url = variable ? env[variable] : undefined;
  if (!variable || !url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // the CLI says what it makes of it
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const local = host === "localhost" || host === "::1" || /^127\./.test(host);
  if (!local && PROXY_VARIABLES.some((name) => env[name])) return undefined;
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  return { variable, url, host, port };
}

/**
 * Whether the provider an agent is configured to call can be connected to:
 * a refused connection, an unknown host or no answer within a few seconds is
 * said at once, in the network's words, instead of waiting out the CLI's own
 * retries (Claude Code retries a refused connection for minutes, then says
 * only "unknown"). Undefined when it connects, or when there is nothing to check.
 */
export async function providerUnreachable(kind: AgentKind, env: Readonly<Record<string, string | undefined>>, timeoutMs = REACH_TIMEOUT_MS): Promise<string | undefined> {
  const address = providerAddress(kind, env);
  if (!address) return undefined;
  const failed = await new Promise<string | undefined>((resolve) => {
    const socket = connect({ host: address.host, port: address.port });
    const done = (why: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    socket.once("connect", () => done(undefined));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED" ? `connection refused (${error.message})` : `${error.code ?? "error"}: ${error.message}`));
  });
  return failed ? `its provider at ${address.url} (${address.variable}) cannot be reached: ${failed}` : undefined;
}
