import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Notifier, notificationBody } from "../../src/loop/notify.js";

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

  it("carry the event's fields, the next command and one line of text", () => {
    const at = new Date("2026-12-02T03:00:00Z");
    expect(notificationBody("/repo/app", { event: "blocked", packet: "P02", reason: "the same failure twice\nmore" }, at)).toEqual({
      event: "blocked",
      packet: "P02",
      reason: "the same failure twice\nmore",
      next: "factory show P02",
      repository: "/repo/app",
      at: "2026-12-02T03:00:00.000Z",
      text: "factory (app): P02 is blocked: the same failure twice",
    });
    expect(notificationBody("/repo/app", { event: "run-ended", outcome: "halted", reason: "P02 is blocked", costUsd: 1.5 }, at)).toMatchObject({
      outcome: "halted",
      cost_usd: 1.5,
      report: null,
      text: "factory (app): the run halted: P02 is blocked ($1.50 spent)",
    });
  });
});
