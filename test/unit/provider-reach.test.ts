import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { providerAddress, providerUnreachable } from "../../src/agents/provider-reach.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A port on loopback that nothing listens on: one a server had, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the provider's reach, checked before the model probe", () => {
  it("is checked for a configured base URL only, and not through a proxy unless it is local", () => {
    expect(providerAddress("claude", {})).toBeUndefined(); // the CLI's default: a login or a proxy may be how it gets there
    expect(providerAddress("claude", { ANTHROPIC_BASE_URL: "http://127.0.0.1:8080" })).toEqual({ variable: "ANTHROPIC_BASE_URL", url: "http://127.0.0.1:8080", host: "127.0.0.1", port: 8080 });
    expect(providerAddress("codex", { OPENAI_BASE_URL: "https://llm.internal/v1" })).toMatchObject({ host: "llm.internal", port: 443 });
    expect(providerAddress("codex", { OPENAI_BASE_URL: "https://llm.internal/v1", HTTPS_PROXY: "http://proxy:3128" })).toBeUndefined();
    expect(providerAddress("gemini", { GOOGLE_GEMINI_BASE_URL: "http://localhost:9000", HTTPS_PROXY: "http://proxy:3128" })).toMatchObject({ host: "localhost", port: 9000 });
    expect(providerAddress("command", { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" })).toBeUndefined();
  });

  it("says a refused connection at once, in the network's words", async () => {
    const port = await closedPort();
    const said = await providerUnreachable("claude", { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` });
    expect(said).toBe(`its provider at http://127.0.0.1:${port} (ANTHROPIC_BASE_URL) cannot be reached: connection refused (connect ECONNREFUSED 127.0.0.1:${port})`);
  });

  it("honest twin: a provider that accepts the connection is quiet", async () => {
    const server = createServer((socket) => socket.end());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    expect(await providerUnreachable("claude", { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` })).toBeUndefined();
  });
});
