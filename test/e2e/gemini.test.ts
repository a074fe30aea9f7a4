import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type GeminiScript, type GeminiTurn, startGeminiServer } from "../helpers/gemini-server.js";
import { DOUBLE_JS, expectMergedHonestly, HONEST_RESULT, HONEST_REVIEW, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * The real Gemini CLI (a pinned devDependency from the npm registry) against
 * a scripted Gemini API server on 127.0.0.1. The CLI takes its endpoint from
 * GOOGLE_GEMINI_BASE_URL; with that variable alone it picks a "gateway" auth
 * method its headless mode refuses, so the test HOME's settings select the
 * API key, as a user of a proxy would.
 */
const GEMINI = fileURLToPath(new URL("../../agent-clis/node_modules/.bin/gemini", import.meta.url));
const available = existsSync(GEMINI);
if (!available) console.warn(`skipping the Gemini tests: ${GEMINI} is not installed (npm test installs it: node scripts/agent-clis.mjs)`);

const MODEL = "gemini-2.5-pro";
const setUp = useLoopRepos(afterEach);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function withGemini(script: GeminiScript) {
  const server = await startGeminiServer(script);
  const home = mkdtempSync(join(tmpdir(), "factory-gemini-home-"));
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }));
  cleanups.push(
    () => server.close(),
    () => rmSync(home, { recursive: true, force: true }),
  );
  const target = setUp({
    script: {},
    agents: `[agents.gemini]
kind = "gemini"
bin = "${GEMINI}"
env = { GEMINI_API_KEY = "test-not-a-key", GOOGLE_GEMINI_BASE_URL = "${server.url}", HOME = "${home}" }
prices = { "${MODEL}" = { input = 1.25, output = 10.0, cached_input = 0.31 } }

[tiers]
basic = { agent = "gemini", model = "${MODEL}" }
standard = { agent = "gemini", model = "${MODEL}" }
advanced = { agent = "gemini", model = "${MODEL}" }`,
  });
  return { server, target };
}

const write = (path: string, content: string) => ({ name: "write_file", args: { file_path: path, content } });
const implementHonestly: GeminiTurn[] = [
  { calls: [write("src/double.js", DOUBLE_JS), { name: "run_shell_command", args: { command: "node --check src/double.js" } }] },
  { calls: [write(".factory/result.json", JSON.stringify(HONEST_RESULT))] },
  { text: "Done." },
];
const reviewHonestly: GeminiTurn[] = [
  { calls: [{ name: "read_file", args: { file_path: "src/double.js" } }] },
  { calls: [write(".factory/review.json", JSON.stringify(HONEST_REVIEW))] },
  { text: "Reviewed." },
];

describe.skipIf(!available)("factory run with the real Gemini CLI", () => {
  it("merges work Gemini wrote with its own tools, with cost computed from its token counts", async () => {
    const { server, target } = await withGemini({ implementer: [implementHonestly], reviewer: [reviewHonestly] });
    await expectMergedHonestly(target, await target.run());
    const finished = (await target.events("P01")).filter((event) => event.kind === "agent-finished");
    // 3 requests of 1000 input (200 cached) and 100 output tokens at $1.25 / $0.31 / $10 per million.
    const perRequest = (800 * 1.25 + 200 * 0.31 + 100 * 10) / 1_000_000;
    expect(finished[0]).toMatchObject({ role: "implementer", outcome: "ok", sessionId: expect.any(String), model: MODEL });
    expect(finished[0]).toMatchObject({ costSource: "computed", turns: 3, tokens: { input: 3000, output: 300, cached: 600 }, version: expect.stringContaining("0.61.0") });
    expect(finished[0]?.kind === "agent-finished" && finished[0].costUsd).toBeCloseTo(3 * perRequest, 10);
    expect(finished[1]).toMatchObject({ role: "reviewer", outcome: "ok" });
    expect(server.sessions).toEqual([
      { role: "implementer", resumed: false },
      { role: "reviewer", resumed: false },
    ]);
  }, 120_000);

  it("a shell command outside the surface's programs is refused by the CLI's policy and reported as a denial", async () => {
    const sneaky: GeminiTurn[] = [{ calls: [{ name: "run_shell_command", args: { command: "touch src/sneaky.js" } }] }, { text: "Done." }];
    const { target } = await withGemini({ implementer: [sneaky] });
    await target.run({ once: true });
    const finished = (await target.events("P01")).find((event) => event.kind === "agent-finished");
    expect(finished).toMatchObject({ role: "implementer", outcome: "permission-denied", detail: expect.stringContaining("run_shell_command") });
    expect(existsSync(join(target.dir, ".factory", "worktrees", "P01", "src", "sneaky.js"))).toBe(false);
  }, 120_000);

  it("a reviewer may write its review file and nothing else", async () => {
    const meddling: GeminiTurn[] = [{ calls: [write("src/double.js", "export const double = () => 0;\n")] }, ...reviewHonestly.slice(1)];
    const { target } = await withGemini({ implementer: [implementHonestly], reviewer: [meddling] });
    await target.run({ once: true });
    const reviewer = (await target.events("P01")).find((event) => event.kind === "agent-finished" && event.role === "reviewer");
    expect(reviewer).toMatchObject({ outcome: "permission-denied", detail: expect.stringContaining("write_file") });
    expect(target.subjects()[0]).toBe("queue");
  }, 120_000);

  it("a quota error is waited out at the reset the API gave, without an attempt spent or a second claim, then merges", async () => {
    const limited: GeminiTurn = {
      http: {
        status: 429,
        status_text: "RESOURCE_EXHAUSTED",
        message: "You exceeded your current quota. Please retry in 1.5s.",
        details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel" }] }],
      },
    };
    const { target } = await withGemini({ implementer: [[limited], implementHonestly], reviewer: [reviewHonestly] });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toMatch(/rate-limited: agent "gemini" waits until \S+ \(the reset it reported; no attempt spent\)/);
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "agent-finished").map((event) => event.kind === "agent-finished" && event.outcome)).toEqual(["rate-limited", "ok", "ok"]);
    expect(events.filter((event) => event.kind === "claimed")).toHaveLength(1);
    expect(await target.record("P01")).toMatchObject({ status: { state: "merged" }, attemptsUsed: 1 });
  }, 120_000);

  it("a malformed review gets one correction round, resuming the Gemini session", async () => {
    const invalid: GeminiTurn = { calls: [write(".factory/review.json", JSON.stringify({ ...HONEST_REVIEW, invariants: [] }))] };
    const { server, target } = await withGemini({ implementer: [implementHonestly], reviewer: [[invalid, { text: "Reviewed." }], reviewHonestly.slice(1)] });
    const { code } = await target.run();
    expect(code).toBe(0);
    const reviewers = (await target.events("P01")).filter((event) => event.kind === "agent-finished" && event.role === "reviewer");
    expect(reviewers).toHaveLength(2);
    expect(server.sessions).toEqual([
      { role: "implementer", resumed: false },
      { role: "reviewer", resumed: false },
      { role: "reviewer", resumed: true },
    ]);
  }, 120_000);
});
