import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runCliAsync } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A local webhook: `answer` decides each request's fate; every request's parsed body is kept. */
async function webhook(answer: (count: number, response: ServerResponse) => void): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const listening = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      expect(request.method).toBe("POST");
      expect(request.headers["content-type"]).toBe("application/json");
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      answer(bodies.length, response);
    });
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}/hook`, bodies };
}

const notifyConfig = (url: string, extra = "") => `\n[notify]\nwebhook = "${url}"\ndesktop = false\n${extra}`;

describe("the webhook", () => {
  it("gets one well-formed message per event, and a 503 is tried again", async () => {
    const hook = await webhook((count, response) => {
      response.statusCode = count === 1 ? 503 : 200; // the first try fails: it must be tried again
      response.end();
    });
    const target = setUp({ packet: `gate = "human"`, config: notifyConfig(hook.url), script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).not.toContain("not delivered");
    const [failed, ...delivered] = hook.bodies;
    expect(failed?.event).toBe("awaiting_human");
    expect(delivered.map((body) => body.event)).toEqual(["awaiting_human", "run-ended"]);
    expect(delivered[0]).toMatchObject({ packet: "P01", approve: "factory approve P01", repository: target.dir, text: expect.stringContaining("P01 waits for a person: factory approve P01") });
    expect(delivered[1]).toMatchObject({ outcome: "drained", cost_usd: expect.any(Number), merged: [], waiting: ["P01"], blocked: [] });
    expect(String(delivered[1]?.text)).toMatch(/the run drained \(\$\d+\.\d\d spent\): 0 merged, 1 waits for you: P01, 0 blocked$/);
    expect(typeof delivered[1]?.at).toBe("string");
  }, 60_000);

  it("is told what merged, what a person approved, and what the run ended with", async () => {
    const hook = await webhook((_, response) => response.end());
    const target = setUp({ config: notifyConfig(hook.url), script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    expect((await target.run()).code).toBe(0);
    const commit = target.git("rev-parse", "main").trim();
    expect(hook.bodies.map((body) => body.event)).toEqual(["merged", "run-ended"]);
    expect(hook.bodies[0]).toMatchObject({ packet: "P01", commit, text: expect.stringMatching(new RegExp(`P01 merged as ${commit.slice(0, 10)}$`)) });
    expect(hook.bodies[1]).toMatchObject({ merged: ["P01"], waiting: [], blocked: [], text: expect.stringMatching(/: 1 merged, 0 wait for you, 0 blocked$/) });
    // A held packet a person approves: the approval is told, with who and the commit.
    const held = setUp({ packet: `gate = "human"`, config: notifyConfig(hook.url), script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    await held.run();
    hook.bodies.length = 0;
    const approved = await runCliAsync(["approve", "P01", "--yes"], held.dir); // not spawnSync: this process answers the webhook
    expect(approved.code, approved.stderr).toBe(0);
    expect(hook.bodies).toEqual([expect.objectContaining({ event: "approved", packet: "P01", by: held.git("config", "user.name").trim(), commit: held.git("rev-parse", "main").trim() })]);
  }, 90_000);

  it("gets agent text inert: an implementer's stderr cannot mention everyone or disguise a link", async () => {
    const hook = await webhook((_, response) => response.end());
    const shout = { run: `echo '<!channel> <https://evil.example/approve|factory approve P01> @here' >&2`, exit: 1 };
    const target = setUp({ config: notifyConfig(hook.url), script: { P01: { implementer: [shout, shout] } } });
    expect((await target.run()).code).toBe(1);
    const blocked = hook.bodies.find((body) => body.event === "blocked");
    expect(String(blocked?.reason)).toContain("&lt;!channel&gt; &lt;https://evil.example/approve|factory approve P01&gt; @\u2060here");
    for (const body of hook.bodies) {
      for (const field of [body.text, body.reason]) expect(String(field)).not.toMatch(/<!channel>|<https:|@here/);
    }
  }, 60_000);

  it("is told about a block with its reason", async () => {
    const hook = await webhook((_, response) => response.end());
    const target = setUp({ config: notifyConfig(hook.url), script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }] } } });
    expect((await target.run()).code).toBe(1);
    expect(hook.bodies.map((body) => body.event)).toEqual(["blocked", "run-ended"]);
    expect(hook.bodies[0]).toMatchObject({ packet: "P01", reason: expect.stringContaining("out of attempts"), next: "factory show P01" });
  }, 60_000);

  it("that keeps failing is tried three times per message in all, then reported with the count", async () => {
    const hook = await webhook((_, response) => {
      response.statusCode = 503;
      response.end();
    });
    const target = setUp({ packet: `gate = "human"`, config: notifyConfig(hook.url, `timeout = "20s"`), script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(hook.bodies.filter((body) => body.event === "awaiting_human")).toHaveLength(3);
    expect(hook.bodies.filter((body) => body.event === "run-ended")).toHaveLength(3);
    expect(out).toMatch(/not delivered: awaiting_human: the webhook at 127\.0\.0\.1:\d+ did not take it \(3 tries; the last: HTTP 503\)/);
  }, 60_000);

  it("that hangs holds the run no longer than its timeout, and is reported", async () => {
    const hook = await webhook(() => undefined); // never answers
    const target = setUp({ packet: `gate = "human"`, config: notifyConfig(hook.url, `timeout = "1s"`), script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(0);
    expect(out).toContain("P01#1 → awaiting_human");
    expect(out).toMatch(/warning: a notification was not delivered: awaiting_human: the webhook at 127\.0\.0\.1:\d+ did not take it within 1s/);
    expect(out).toMatch(/warning: a notification was not delivered: run-ended: the webhook at 127\.0\.0\.1:\d+ did not take it within 1s/);
  }, 60_000);
});
