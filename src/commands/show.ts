import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Output } from "../log/output.js";
import { attemptDir } from "../loop/context.js";
import { blockedNextStep } from "../status/next-step.js";
import { showPacket } from "../status/show.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadPacketRecord } from "./packet-record.js";

export interface ShowOptions {
  cwd: string;
  id: string;
  output: Output;
  /** `{ schema, packet, goal, state, attempts_used, cost_usd, reason, next, events }` instead of text. */
  json?: boolean;
}

/** `factory show ID`: one packet for a person: attempts, calls and costs, gates with their tails, rulings, decisions. */
export async function show(options: ShowOptions): Promise<ExitCode> {
  const loaded = await loadPacketRecord(options.cwd, options.id, options.output);
  if (!loaded) return EXIT.invalid;
  const { workspace, packet, record } = loaded;
  const tail = (attempt: number, gate: string): string | undefined => {
    const log = join(attemptDir(workspace.root, options.id, attempt), `gate-${gate}.log`);
    return existsSync(log) ? readFileSync(log, "utf8") : undefined;
  };
  const state = record?.status.state ?? "queued";
  const next =
    state === "awaiting_human"
      ? `factory diff ${options.id}, then factory approve ${options.id} or factory reject ${options.id} --reason "…"`
      : record?.status.state === "blocked"
        ? blockedNextStep(options.id, record.status)
        : record?.status.state === "awaiting_answer"
          ? `factory answer ${options.id} "…"`
          : null;
  if (options.json) {
    const shown = {
      schema: 1,
      packet: options.id,
      goal: packet?.goal ?? null,
      state,
      attempts_used: record?.attemptsUsed ?? 0,
      last_attempt: record?.lastAttempt ?? 0,
      cost_usd: Math.round((record?.costUsd ?? 0) * 1e6) / 1e6,
      reason: record?.reason ?? null,
      next,
      events: record?.events ?? [],
    };
    options.output.out(JSON.stringify(shown, null, 2));
    return EXIT.ok;
  }
  const maxAttempts = packet ? packet.maxAttempts + (record?.sha256 === undefined || record.sha256 === packet.sha256 ? (record?.extraAttempts ?? 0) : 0) : undefined;
  for (const line of showPacket({ id: options.id, ...(packet ? { goal: packet.goal, sha256: packet.sha256 } : {}), ...(maxAttempts !== undefined ? { maxAttempts } : {}), record, state, tail }))
    options.output.out(line);
  if (next) options.output.out(`\nnext: ${next}`);
  return EXIT.ok;
}
