import { formatDuration } from "../util/duration.js";
import type { ProgressEvent } from "./progress-event.js";

/** A packet in flight, as the live lines show it. */
export interface InFlight {
  attempt: number;
  step: string;
  /** When its attempt started (ms). */
  since: number;
  spentUsd: number;
}

/** Pure: follows one event: a step or gate moves a packet's line on, an agent's cost adds up, an outcome ends the line. */
export function track(inFlight: Map<string, InFlight>, event: ProgressEvent, now: number): void {
  if (!("packet" in event) || event.packet === undefined || !("attempt" in event)) return;
  const current = inFlight.get(event.packet);
  const entry = current && current.attempt === event.attempt ? current : { attempt: event.attempt, step: "", since: now, spentUsd: 0 };
  switch (event.kind) {
    case "step":
      entry.step = event.step;
      break;
    case "gate":
      entry.step = `gate ${event.gate}`;
      break;
    case "agent":
      entry.spentUsd += event.costUsd ?? 0;
      break;
    case "outcome":
      inFlight.delete(event.packet);
      return;
  }
  inFlight.set(event.packet, entry);
}

/** Pure: one line per packet in flight: packet, step, elapsed, spend so far. */
export function liveLines(inFlight: ReadonlyMap<string, InFlight>, now: number): string[] {
  return [...inFlight].map(([packet, entry]) => `  ⋯ ${packet}#${entry.attempt}  ${entry.step || "starting"}  ${formatDuration(Math.max(0, now - entry.since))}  $${entry.spentUsd.toFixed(2)}`);
}

/**
 * On a terminal: the live lines stay below the event lines, redrawn on each
 * event and every second (cursor up, clear to the end of the screen), and are
 * erased when the run ends.
 */
export function createLiveBoard(write: (text: string) => void): { line: (text: string | undefined, event: ProgressEvent) => void; close: () => void } {
  const inFlight = new Map<string, InFlight>();
  let shown = 0;
  const draw = (above?: string): void => {
    const lines = liveLines(inFlight, Date.now());
    const erase = shown > 0 ? `\u001b[${shown}A\u001b[0J` : "";
    write(`${erase}${above !== undefined ? `${above}\n` : ""}${lines.map((line) => `${line}\n`).join("")}`);
    shown = lines.length;
  };
  const timer = setInterval(() => {
    if (shown > 0 || inFlight.size > 0) draw();
  }, 1000);
  timer.unref();
  return {
    line: (text, event) => {
      track(inFlight, event, Date.now());
      if (text !== undefined || inFlight.size !== shown) draw(text);
    },
    close: () => {
      clearInterval(timer);
      inFlight.clear();
      draw();
    },
  };
}
