import { basename } from "node:path";
import type { Config } from "../config/types.js";
import { baseEnv, describeOutcome, runCommand } from "../process/run.js";
import { openBoardUrl } from "../status/board-url.js";
import { formatDuration } from "../util/duration.js";
import { chatInert } from "../util/inert-text.js";

/** What a person is told about: a packet that needs them, one that blocked, and the end of a run. */
export type Notification =
  | { event: "awaiting_human"; packet: string }
  | { event: "question"; packet: string; question: string; suggestions: string[] }
  | { event: "blocked"; packet: string; reason: string }
  | { event: "merged"; packet: string; commit: string }
  | { event: "approved"; packet: string; by: string; commit: string }
  | { event: "run-ended"; outcome: string; reason?: string; costUsd: number; report?: string; counts?: RunCounts };

/** What a run ended with, by packet: landed by it, waiting for a person now (held or asking), blocked now. */
export interface RunCounts {
  merged: string[];
  waiting: string[];
  blocked: string[];
}

/** The longest reason a one-line `text` carries; the whole one is in `reason`. */
const SHORT_REASON = 160;

/** Pure: "3 merged, 1 waits for you: K03, 0 blocked" (names up to five per kind). */
export function countsText(counts: RunCounts): string {
  const names = (ids: readonly string[]): string => (ids.length ? `: ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ` and ${ids.length - 5} more` : ""}` : "");
  return `${counts.merged.length} merged, ${counts.waiting.length} ${counts.waiting.length === 1 ? "waits" : "wait"} for you${names(counts.waiting)}, ${counts.blocked.length} blocked${names(counts.blocked)}`;
}

/**
 * Pure: the JSON body every channel gets (docs/guides/night-and-morning.md documents it): the
 * event's fields, the repository, the time, the next command where there is
 * one, and `text`, one line for a person (Slack's incoming webhooks show it).
 */
export function notificationBody(root: string, notification: Notification, now = new Date()): Record<string, unknown> {
  const common = { repository: root, at: now.toISOString() };
  const where = basename(root);
  switch (notification.event) {
    case "awaiting_human":
      return {
        event: notification.event,
        packet: notification.packet,
        approve: `factory approve ${notification.packet}`,
        ...common,
        text: `factory (${where}): ${notification.packet} waits for a person: factory approve ${notification.packet}`,
      };
    case "question":
      // The question is agent text: inert, quoted, after the factory's own words and command.
      return {
        event: notification.event,
        packet: notification.packet,
        question: chatInert(notification.question),
        suggestions: notification.suggestions.map(chatInert),
        answer: `factory answer ${notification.packet} "…"`,
        ...common,
        text: `factory (${where}): ${notification.packet} asks a question (answer with factory answer ${notification.packet} "…"): "${chatInert(notification.question.split("\n")[0] ?? "")}"`,
      };
    case "blocked":
      // The reason carries agent text: inert, quoted, and after the factory's own words and command, never before them.
      return {
        event: notification.event,
        packet: notification.packet,
        reason: chatInert(notification.reason),
        next: `factory show ${notification.packet}`,
        ...common,
        text: `factory (${where}): ${notification.packet} is blocked (see factory show ${notification.packet}): "${chatInert(notification.reason.split("\n")[0] ?? "")}"`,
      };
    case "merged":
      return {
        event: notification.event,
        packet: notification.packet,
        commit: notification.commit,
        ...common,
        text: `factory (${where}): ${notification.packet} merged as ${notification.commit.slice(0, 10)}`,
      };
    case "approved":
      return {
        event: notification.event,
        packet: notification.packet,
        by: notification.by,
        commit: notification.commit,
        ...common,
        text: `factory (${where}): ${notification.packet} approved by ${chatInert(notification.by)} and merged as ${notification.commit.slice(0, 10)}`,
      };
    case "run-ended": {
      const reason = notification.reason === undefined ? undefined : chatInert(notification.reason);
      const short = reason && reason.length > SHORT_REASON ? `${reason.slice(0, SHORT_REASON - 1)}…` : reason;
      const counts = notification.counts;
      return {
        event: notification.event,
        outcome: notification.outcome,
        reason: reason ?? null,
        cost_usd: notification.costUsd,
        report: notification.report ?? null,
        ...(counts ? { merged: counts.merged, waiting: counts.waiting, blocked: counts.blocked } : {}),
        ...common,
        text: `factory (${where}): the run ${notification.outcome} ($${notification.costUsd.toFixed(2)} spent)${counts ? `: ${countsText(counts)}` : ""}${short ? `${counts ? ";" : ":"} "${short}"` : ""}`,
      };
    }
  }
}

/**
 * Sends notifications on every channel the config names (`[notify] command`
 * with the body on stdin, `webhook` as a JSON POST, and a desktop
 * notification where `notify-send` and a session bus exist) without holding
 * the run: each delivery runs beside it, bounded by `[notify] timeout`, its
 * retries included. `settle()` waits for those under way (the end of a run)
 * and returns what failed; a failing channel is reported, never fatal.
 */
export class Notifier {
  private readonly pending = new Set<Promise<void>>();
  /** The last delivery of each channel: the next one starts after it. */
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly failures: string[] = [];

  constructor(
    private readonly root: string,
    private readonly config: Config["notify"],
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  send(notification: Notification): void {
    const board = openBoardUrl(this.root);
    const body: Record<string, unknown> = { ...notificationBody(this.root, notification), ...(board ? { board } : {}) };
    // Each channel delivers in the order sent; a delivery's time runs from when it was sent, so the end of
    // a run waits for the last one at most `timeout`, whatever the ones before it did.
    const deadline = Date.now() + this.config.timeoutMs;
    const { command, webhook, desktop, timeoutMs } = this.config;
    const channels: [string, () => Promise<string | undefined>][] = [];
    if (command) channels.push(["command", () => this.command(command, body, deadline)]);
    if (webhook) channels.push(["webhook", () => postWebhook(webhook, body, deadline, timeoutMs)]);
    if (desktop && this.env.DBUS_SESSION_BUS_ADDRESS) channels.push(["desktop", () => this.desktop(String(body.text), deadline)]);
    for (const [channel, deliver] of channels) {
      const delivery = (this.lanes.get(channel) ?? Promise.resolve())
        .then(deliver)
        .then((failure) => {
          if (failure) this.failures.push(`${notification.event}: ${failure}`);
        })
        .finally(() => this.pending.delete(delivery));
      this.lanes.set(channel, delivery);
      this.pending.add(delivery);
    }
  }

  /** Waits for the deliveries under way; what failed since the last call. */
  async settle(): Promise<string[]> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    return this.failures.splice(0);
  }

  private async command(command: string, body: Record<string, unknown>, deadline: number): Promise<string | undefined> {
    const left = deadline - Date.now();
    if (left <= 0) return `the notify command was not started: the ones before it took the ${formatDuration(this.config.timeoutMs)} it had`;
    const outcome = await runCommand({ command, cwd: this.root, env: baseEnv(), input: `${JSON.stringify(body)}\n`, timeoutMs: left });
    return outcome.kind === "exited" && outcome.code === 0 ? undefined : `the notify command ${describeOutcome(outcome)}`;
  }

  private async desktop(text: string, deadline: number): Promise<string | undefined> {
    if (deadline <= Date.now()) return undefined; // late: a desktop notice of something long past helps nobody
    const outcome = await runCommand({
      command: `command -v notify-send >/dev/null 2>&1 || exit 0; notify-send factory "$FACTORY_NOTIFICATION"`,
      cwd: this.root,
      env: { ...baseEnv(), DBUS_SESSION_BUS_ADDRESS: this.env.DBUS_SESSION_BUS_ADDRESS ?? "", FACTORY_NOTIFICATION: text },
      timeoutMs: deadline - Date.now(),
    });
    return outcome.kind === "exited" && outcome.code === 0 ? undefined : `notify-send ${describeOutcome(outcome)}`;
  }
}

/** Tries after a failure that may pass (no answer, a 5xx, a 429): waits before the second and third try. */
const RETRY_WAITS_MS = [500, 2_000];

/**
 * POSTs `body` as JSON to `url`, trying again after a network failure, a 5xx
 * or a 429, until `deadline` (`timeoutMs` after it was sent); a 4xx other
 * than 429 is not tried again. Returns what failed, or undefined once it was
 * delivered.
 */
export async function postWebhook(url: string, body: Record<string, unknown>, deadline: number, timeoutMs: number): Promise<string | undefined> {
  const where = new URL(url).host;
  let last = "";
  for (let attempt = 0; ; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return `the webhook at ${where} did not take it within ${formatDuration(timeoutMs)} (${attempt} tries; the last: ${last})`;
    try {
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(left) });
      await response.body?.cancel();
      if (response.ok) return undefined;
      last = `HTTP ${response.status}`;
      if (response.status < 500 && response.status !== 429) return `the webhook at ${where} refused it: ${last}`;
    } catch (error) {
      last = error instanceof Error && error.name === "TimeoutError" ? "no answer" : error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
    const wait = RETRY_WAITS_MS[attempt];
    if (wait === undefined) return `the webhook at ${where} did not take it (${attempt + 1} tries; the last: ${last})`;
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait, Math.max(0, deadline - Date.now()))));
  }
}
