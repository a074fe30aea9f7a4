import { blockedNextStep } from "../status/next-step.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Output } from "../log/output.js";
import { attemptDir } from "../loop/context.js";
import { showPacket } from "../status/show.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadPacketRecord } from "./packet-record.js";

export interface ShowOptions {
  cwd: string;
  id: string;
  output: Output;
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
  for (const line of showPacket({ id: options.id, ...(packet ? { goal: packet.goal, sha256: packet.sha256 } : {}), record, state, tail })) options.output.out(line);
  if (state === "awaiting_human") options.output.out(`\nnext: factory diff ${options.id}, then factory approve ${options.id} or factory reject ${options.id} --reason "…"`);
  if (record?.status.state === "blocked") options.output.out(`\nnext: ${blockedNextStep(options.id, record.status)}`);
  return EXIT.ok;
}
