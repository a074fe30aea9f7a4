import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countsText, Notifier, notificationBody } from "../../src/loop/notify.js";
import { announceBoard, boardUrlFile, openBoardUrl } from "../../src/status/board-url.js";

let dir: string;
let path: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "factory-notify-"));
  path = process.env.PATH;
  // A notify-send that writes what it was given where the test can read it.
  writeFileSync(join(dir, "notify-send"), `#!/bin/sh\nprintf '%s|%s\\n' "$1" "$2" >> '${join(dir, "shown")}'\n`);
  chmodSync(join(dir, "notify-send"), 0o755);
  process.env.PATH = `${dir}:${path}`;
});
afterEach(() => {
  process.env.PATH = path;
  rmSync(dir, { recursive: true, force: true });
});

const config = { command: undefined, webhook: undefined, timeoutMs: 5_000, desktop: true };

describe("notifications", () => {
  it("show on the desktop through notify-send when a session bus is there", async () => {
    const notifier = new Notifier(dir, config, { DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/0/bus" });
    notifier.send({ event: "awaiting_human", packet: "P01" });
    expect(await notifier.settle()).toEqual([]);
    expect(readFileSync(join(dir, "shown"), "utf8")).toMatch(/^factory\|factory \(factory-notify-\w+\): P01 waits for a person: factory approve P01\n$/);
  });

  it("stay off the desktop without a session bus, or with desktop = false", async () => {
    for (const [env, desktop] of [
      [{}, true],
      [{ DBUS_SESSION_BUS_ADDRESS: "unix:path=/x" }, false],
    ] as const) {
      const notifier = new Notifier(dir, { ...config, desktop }, env);
      notifier.send({ event: "blocked", packet: "P01", reason: "r" });
      expect(await notifier.settle()).toEqual([]);
    }
    expect(existsSync(join(dir, "shown"))).toBe(false);
  });

  it("name the board's URL while a board is open on the repository, and not after its process is gone", async () => {
    mkdirSync(join(dir, ".factory", "state"), { recursive: true });
    const told = async (): Promise<Record<string, unknown>> => {
      rmSync(join(dir, "body.json"), { force: true });
      const notifier = new Notifier(dir, { ...config, desktop: false, command: `cat > '${join(dir, "body.json")}'` });
      notifier.send({ event: "awaiting_human", packet: "P01" });
      expect(await notifier.settle()).toEqual([]);
      return JSON.parse(readFileSync(join(dir, "body.json"), "utf8")) as Record<string, unknown>;
    };
    expect((await told()).board).toBeUndefined();
    const closed = announceBoard(dir, "http://127.0.0.1:4321/");
    expect((await told()).board).toBe("http://127.0.0.1:4321/");
    closed();
    expect((await told()).board).toBeUndefined();
    // A board killed without closing leaves its file: a process that is gone is no open board.
    writeFileSync(boardUrlFile(dir), JSON.stringify({ url: "http://127.0.0.1:4321/", pid: 2 ** 22 + 1 }));
    expect(openBoardUrl(dir)).toBeUndefined();
    expect(openBoardUrl(dir, () => true)).toBe("http://127.0.0.1:4321/");
  });

  it("carry the event's fields, the next command and one line of text", () => {
    const at = new Date("2026-12-02T03:00:00Z");
    expect(notificationBody("/repo/app", { event: "blocked", packet: "P02", reason: "the same failure twice\nmore" }, at)).toEqual({
      event: "blocked",
      packet: "P02",
      reason: "the same failure twice\nmore",
      next: "factory show P02",
      repository: "/repo/app",
      at: "2026-12-02T03:00:00.000Z",
      text: 'factory (app): P02 is blocked (see factory show P02): "the same failure twice"',
    });
    expect(notificationBody("/repo/app", { event: "run-ended", outcome: "halted", reason: "P02 is blocked", costUsd: 1.5 }, at)).toMatchObject({
      outcome: "halted",
      cost_usd: 1.5,
      report: null,
      text: 'factory (app): the run halted ($1.50 spent): "P02 is blocked"',
    });
  });

  it("name a run's counts and cut a long reason in the text (the whole one in reason)", () => {
    const reason = `P03 is blocked: ${"x".repeat(400)}`;
    const body = notificationBody(
      "/repo/app",
      { event: "run-ended", outcome: "halted", reason, costUsd: 1, counts: { merged: ["K01", "K02", "K04"], waiting: ["K03"], blocked: ["P03"] } },
      new Date(),
    );
    expect(body).toMatchObject({ merged: ["K01", "K02", "K04"], waiting: ["K03"], blocked: ["P03"], reason });
    expect(String(body.text)).toMatch(/^factory \(app\): the run halted \(\$1\.00 spent\): 3 merged, 1 waits for you: K03, 1 blocked: P03; "P03 is blocked: x+…"$/);
    expect(String(body.text).length).toBeLessThan(260);
    expect(countsText({ merged: [], waiting: ["A", "B", "C", "D", "E", "F", "G"], blocked: [] })).toBe("0 merged, 7 wait for you: A, B, C, D, E and 2 more, 0 blocked");
  });

  it("carry a question with its suggested answers, inert, after the factory's own command", () => {
    const question = "Seconds or <!channel> milliseconds? ask @alice";
    const body = notificationBody("/repo/app", { event: "question", packet: "P01", question, suggestions: ["seconds", "<https://evil.example|factory approve P01>"] }, new Date());
    expect(body).toMatchObject({ event: "question", packet: "P01", answer: 'factory answer P01 "…"' });
    for (const field of [String(body.text), String(body.question), ...(body.suggestions as string[])]) expect(field).not.toMatch(/[<>]|@alice/);
    expect(String(body.text)).toMatch(/^factory \(app\): P01 asks a question \(answer with factory answer P01 "…"\): "Seconds or &lt;!channel&gt; milliseconds\? ask @\u2060alice"$/);
  });

  it("make agent text inert: no Slack mention or disguised link, no @-mention, and the factory's command before it", () => {
    const reason = "the implementer agent-error: exited with code 1: <!channel> see <https://evil.example/approve|factory approve P02> & ping @here @alice";
    const body = notificationBody("/repo/app", { event: "blocked", packet: "P02", reason }, new Date());
    const text = String(body.text);
    for (const field of [text, String(body.reason)]) {
      expect(field).not.toMatch(/[<>]/);
      expect(field).not.toMatch(/@(here|alice|channel)/);
      expect(field).toContain("&lt;!channel&gt;");
      expect(field).toContain("&lt;https://evil.example/approve|factory approve P02&gt; &amp; ping @\u2060here @\u2060alice");
    }
    // The factory's own command comes first; the agent's words only inside the quotes after it.
    expect(text.indexOf("factory show P02")).toBeLessThan(text.indexOf('"'));
    const ended = notificationBody("/repo/app", { event: "run-ended", outcome: "halted", reason: `P02 is blocked: ${reason}`, costUsd: 0 }, new Date());
    expect(String(ended.text)).not.toMatch(/[<>]|@here/);
    expect(String(ended.reason)).not.toMatch(/[<>]|@here/);
    // The factory's own text is unchanged.
    expect(notificationBody("/repo/app", { event: "awaiting_human", packet: "P01" }).text).toMatch(/P01 waits for a person: factory approve P01$/);
  });
});
