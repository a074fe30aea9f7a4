import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, expectMergedHonestly, HONEST_RESULT, HONEST_REVIEW, useLoopRepos } from "../helpers/loop-repo.js";
import { type CodexScript, type CodexTurn, startOpenAIServer } from "../helpers/openai-server.js";

/**
 * The real Codex CLI (a pinned devDependency from the npm registry) against a
 * scripted Responses API server on 127.0.0.1, configured as a custom model
 * provider through the agent's `args`.
 */
const CODEX = fileURLToPath(new URL("../../agent-clis/node_modules/.bin/codex", import.meta.url));
const available = existsSync(CODEX);
if (!available) console.warn(`skipping the Codex tests: ${CODEX} is not installed (npm test installs it: node scripts/agent-clis.mjs)`);

const MODEL = "gpt-5-codex";
const setUp = useLoopRepos(afterEach);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function withCodex(script: CodexScript, providerArgs = "", config = "") {
  const server = await startOpenAIServer(script);
  const home = mkdtempSync(join(tmpdir(), "factory-codex-home-"));
  mkdirSync(join(home, ".codex"), { recursive: true });
  cleanups.push(
    () => server.close(),
    () => rmSync(home, { recursive: true, force: true }),
  );
  const target = setUp({
    script: {},
    config,
    agents: `[agents.codex]
kind = "codex"
bin = "${CODEX}"
args = ["-c", 'model_provider="scripted"', "-c", 'model_providers.scripted.name="scripted"', "-c", 'model_providers.scripted.base_url="${server.url}"', "-c", 'model_providers.scripted.wire_api="responses"', "-c", 'model_providers.scripted.env_key="OPENAI_API_KEY"'${providerArgs}]
env = { OPENAI_API_KEY = "sk-test-not-a-key", HOME = "${home}", CODEX_HOME = "${join(home, ".codex")}" }
prices = { "${MODEL}" = { input = 1.25, output = 10.0, cached_input = 0.125 } }

[tiers]
basic = { agent = "codex", model = "${MODEL}" }
standard = { agent = "codex", model = "${MODEL}" }
advanced = { agent = "codex", model = "${MODEL}" }`,
  });
  return { server, target };
}

const heredoc = (path: string, text: string) => `mkdir -p "$(dirname ${path})" && cat > ${path} <<'FACTORY_EOF'\n${text.trimEnd()}\nFACTORY_EOF`;
const implementHonestly: CodexTurn[] = [{ commands: [heredoc("src/double.js", DOUBLE_JS)] }, { commands: [heredoc(".factory/result.json", JSON.stringify(HONEST_RESULT))] }, { text: "Done." }];
const reviewHonestly: CodexTurn[] = [{ commands: ["cat src/double.js"] }, { commands: [heredoc(".factory/review.json", JSON.stringify(HONEST_REVIEW))] }, { text: "Reviewed." }];

describe.skipIf(!available)("factory run with the real Codex CLI", () => {
  it("merges work Codex wrote through its own shell tool, with cost computed from tokens", async () => {
    const { server, target } = await withCodex({ implementer: [implementHonestly], reviewer: [reviewHonestly] });
    await expectMergedHonestly(target, await target.run());
    const finished = (await target.events("P01")).filter((event) => event.kind === "agent-finished");
    // 3 turns of 1000 input (200 cached) and 100 output tokens at $1.25 / $0.125 / $10 per million.
    const perTurn = (800 * 1.25 + 200 * 0.125 + 100 * 10) / 1_000_000;
    expect(finished[0]).toMatchObject({ role: "implementer", outcome: "ok", sessionId: expect.any(String) });
    expect(finished[0]).toMatchObject({ costSource: "computed", turns: 1, tokens: { input: 3000, output: 300, cached: 600 }, version: expect.stringContaining("0.171.0") });
    expect(finished[0]?.kind === "agent-finished" && finished[0].costUsd).toBeCloseTo(3 * perTurn, 10);
    expect(server.roles).toEqual(["implementer", "reviewer"]);
  }, 120_000);

  it("a malformed review gets one correction round, resuming the Codex session", async () => {
    const invalid: CodexTurn = { commands: [heredoc(".factory/review.json", JSON.stringify({ ...HONEST_REVIEW, invariants: [] }))] };
    const valid: CodexTurn = { commands: [heredoc(".factory/review.json", JSON.stringify(HONEST_REVIEW))] };
    const { server, target } = await withCodex({ implementer: [implementHonestly], reviewer: [[invalid, { text: "Reviewed." }, valid, { text: "Fixed." }]] });
    const { code } = await target.run();
    expect(code).toBe(0);
    const reviewers = (await target.events("P01")).filter((event) => event.kind === "agent-finished" && event.role === "reviewer");
    expect(reviewers).toHaveLength(2);
    expect(server.roles).toEqual(["implementer", "reviewer"]); // no third session: the correction resumed the reviewer's
  }, 120_000);

  it("a rate limit is waited out, without an attempt spent or a second claim, then merges", async () => {
    const limited: CodexTurn = { http: { status: 429, type: "tokens", code: "rate_limit_exceeded", message: "Rate limit reached for gpt-5-codex on tokens per min. Please try again in 1.5s." } };
    // Codex's own retries are off, so the limit reaches the factory at once. Codex reports only "exceeded retry
    // limit, last status: 429", not the API's reset, so the factory backs off: 30 s, capped here by rate_limit_wait.
    const noRetries = `, "-c", "model_providers.scripted.request_max_retries=0", "-c", "model_providers.scripted.stream_max_retries=0"`;
    const { target } = await withCodex({ implementer: [[limited], implementHonestly], reviewer: [reviewHonestly] }, noRetries, `rate_limit_wait = "3s"`);
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toMatch(/rate-limited: agent "codex" waits until \S+ \(backing off; no attempt spent\)/);
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "agent-finished").map((event) => event.kind === "agent-finished" && event.outcome)).toEqual(["rate-limited", "ok", "ok"]);
    expect(events.filter((event) => event.kind === "claimed")).toHaveLength(1);
    expect(await target.record("P01")).toMatchObject({ status: { state: "merged" }, attemptsUsed: 1 });
  }, 120_000);

  it("a failed turn is a failure", async () => {
    const { target } = await withCodex({ implementer: [[{ http: { status: 400, message: "Invalid prompt: too long", code: "context_length_exceeded" } }]] });
    await target.run({ once: true });
    const finished = (await target.events("P01")).find((event) => event.kind === "agent-finished");
    expect(finished).toMatchObject({ role: "implementer", outcome: "agent-error" });
    expect(target.subjects()[0]).toBe("queue");
  }, 120_000);
});
