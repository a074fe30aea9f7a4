import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { formatDuration } from "../util/duration.js";
import { createLiveBoard } from "./live.js";
import { paint, type Output } from "./output.js";

/**
 * What a run reports as it goes. The loop emits these; pino writes them as
 * JSON lines to the run's log file and the renderer turns them into terminal
 * lines. Tests watch the same stream.
 */
export type ProgressEvent =
  | { kind: "run-start"; packets: number; run: string }
  | { kind: "step"; packet: string; attempt: number; step: string; detail?: string }
  | { kind: "gate"; packet: string; attempt: number; gate: string; status: string; summary: string; durationMs: number }
  | { kind: "agent"; packet: string; attempt: number; role: string; status: string; costUsd?: number; durationMs: number; detail?: string }
  | { kind: "outcome"; packet: string; attempt: number; outcome: string; reasons: string[] }
  | { kind: "notice"; message: string; packet?: string }
  | { kind: "run-end"; outcome: string; reason?: string; costUsd: number; elapsedMs: number };

export type Emit = (event: ProgressEvent) => void;

/** With `json`, each event is printed as one JSON object per line (`run --json`) instead of a terminal line. */
export function createProgress(output: Output, logFile: string | undefined, options: { json?: boolean } = {}): { emit: Emit; close: () => void } {
  let logger: Logger | undefined;
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    logger = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: logFile, sync: true }));
  }
  // On a terminal, one redrawn line per packet in flight below the event lines; elsewhere plain lines only.
  const live = !options.json && output.isTty && output.raw ? createLiveBoard(output.raw) : undefined;
  return {
    emit: (event) => {
      logger?.info(event);
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
      logger?.flush();
    },
  };
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
