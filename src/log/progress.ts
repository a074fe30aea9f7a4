import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { formatDuration } from "../util/duration.js";
import { createLiveBoard, type InFlight, track } from "./live.js";
import { type Output, paint } from "./output.js";
import type { ProgressEvent } from "./progress-event.js";

export type Emit = (event: ProgressEvent) => void;

/** With `json`, each event is printed as one JSON object per line (`run --json`) instead of a terminal line. */
export function createProgress(output: Output, logFile: string | undefined, options: { json?: boolean; heartbeatMs?: number } = {}): { emit: Emit; close: () => void } {
  let logger: Logger | undefined;
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    logger = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: logFile, sync: true }));
  }
  // On a terminal, one redrawn line per packet in flight below the event lines; elsewhere plain lines, and a
  // heartbeat line for a step that has said nothing for a while (a 15-minute gate is not 15 minutes of silence).
  const live = !options.json && output.isTty && output.raw ? createLiveBoard(output.raw) : undefined;
  const heartbeat = live
    ? undefined
    : createHeartbeat(options.heartbeatMs ?? heartbeatMs(), (beat) => output.out(options.json ? JSON.stringify({ ts: new Date().toISOString(), ...beat }) : renderHeartbeat(beat, output)));
  return {
    emit: (event) => {
      logger?.info(event);
      heartbeat?.track(event);
      if (options.json) {
        output.out(JSON.stringify({ ts: new Date().toISOString(), ...event }));
        return;
      }
      const line = renderProgress(event, output);
      if (live) live.line(line, event);
      else if (line) output.out(line);
    },
    close: () => {
      live?.close();
      heartbeat?.close();
      logger?.flush();
    },
  };
}

/** A packet's step that has been running without a word for a heartbeat's interval. */
export interface Heartbeat {
  kind: "heartbeat";
  packet: string;
  attempt: number;
  step: string;
  /** Since the attempt began. */
  elapsedMs: number;
  spentUsd: number;
}

/** How often a quiet step is said to be alive off a terminal: `FACTORY_HEARTBEAT_SECONDS`, else a minute. */
function heartbeatMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.FACTORY_HEARTBEAT_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 60_000;
}

/** Every `everyMs`, a heartbeat for each packet in flight whose last event is at least that old. */
function createHeartbeat(everyMs: number, beat: (heartbeat: Heartbeat) => void): { track: (event: ProgressEvent) => void; close: () => void } {
  const inFlight = new Map<string, InFlight>();
  const heard = new Map<string, number>();
  const timer = setInterval(
    () => {
      const now = Date.now();
      for (const [packet, entry] of inFlight) {
        if (now - (heard.get(packet) ?? entry.since) < everyMs) continue;
        heard.set(packet, now);
        beat({ kind: "heartbeat", packet, attempt: entry.attempt, step: entry.step || "starting", elapsedMs: now - entry.since, spentUsd: entry.spentUsd });
      }
    },
    Math.min(everyMs, 1000),
  );
  timer.unref();
  return {
    track: (event) => {
      track(inFlight, event, Date.now());
      if ("packet" in event && event.packet !== undefined) heard.set(event.packet, Date.now());
    },
    close: () => clearInterval(timer),
  };
}

/** Pure: a heartbeat as a plain line. */
export function renderHeartbeat(beat: Heartbeat, output: Output): string {
  return `${paint(output, "bold", `${beat.packet}#${beat.attempt}`)} … still ${beat.step} (${formatDuration(beat.elapsedMs)} into the attempt, $${beat.spentUsd.toFixed(2)})`;
}

export function renderProgress(event: ProgressEvent, output: Output): string | undefined {
  const tag = (packet: string, attempt: number): string => paint(output, "bold", `${packet}#${attempt}`);
  switch (event.kind) {
    case "run-start":
      return `factory run: ${event.packets} packet(s) in the queue`;
    case "step":
      return `${tag(event.packet, event.attempt)} ${event.step}${event.detail ? `: ${event.detail}` : ""}`;
    case "gate": {
      const color = event.status === "pass" ? "green" : event.status === "skipped" ? "dim" : "red";
      return `${tag(event.packet, event.attempt)}   gate ${event.gate}: ${paint(output, color, event.status)} — ${event.summary} (${formatDuration(event.durationMs)})`;
    }
    case "agent": {
      const cost = event.costUsd === undefined ? "" : `, $${event.costUsd.toFixed(2)}`;
      return `${tag(event.packet, event.attempt)} ${event.role}: ${event.status} (${formatDuration(event.durationMs)}${cost})${event.detail ? ` — ${event.detail}` : ""}`;
    }
    case "outcome": {
      const color = event.outcome === "merged" ? "green" : event.outcome === "blocked" ? "red" : "yellow";
      return `${tag(event.packet, event.attempt)} → ${paint(output, color, event.outcome)}${event.reasons.length ? `: ${event.reasons.join("; ")}` : ""}`;
    }
    case "notice":
      return `${event.packet ? `${event.packet}: ` : ""}${event.message}`;
    case "run-end":
      return `run ${event.outcome}${event.reason ? `: ${event.reason}` : ""} (${formatDuration(event.elapsedMs)}, $${event.costUsd.toFixed(2)})`;
  }
}
