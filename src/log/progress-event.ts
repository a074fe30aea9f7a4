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
