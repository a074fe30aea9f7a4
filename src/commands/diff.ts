import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { diffText } from "../git/diff.js";
import { bringHeld } from "../git/held-refs.js";
import type { Output } from "../log/output.js";
import { attemptDir } from "../loop/context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadPacketRecord } from "./packet-record.js";

export interface DiffOptions {
  cwd: string;
  id: string;
  output: Output;
  /** `{ schema, packet, attempt, state, source: "held" | "gated", from, to, diff }` instead of text. */
  json?: boolean;
}

/**
 * `factory diff ID`: the change of a held packet (its branch against the
 * commit it forked from, computed by git now), else the last attempt's diff
 * as the factory recorded it when it gated it.
 */
export async function diff(options: DiffOptions): Promise<ExitCode> {
  const { output, id } = options;
  const loaded = await loadPacketRecord(options.cwd, id, output);
  if (!loaded) return EXIT.invalid;
  const { workspace, record } = loaded;
  const status = record?.status;
  if (status?.state === "awaiting_human") {
    const here = await bringHeld(workspace.root, workspace.config?.target.remote, [status.commit]);
    if (here.missing.length > 0) {
      output.err(`${id} is held for a person, but its held commit ${status.commit.slice(0, 10)} is not in this clone; ${here.remedy}`);
      return EXIT.halted;
    }
    const text = (await diffText(workspace.root, status.fork, status.commit)).trimEnd();
    if (options.json) {
      output.out(JSON.stringify({ schema: 1, packet: id, attempt: status.attempt, state: status.state, source: "held", from: status.fork, to: status.commit, diff: text }, null, 2));
      return EXIT.ok;
    }
    output.out(`# ${id}: held attempt ${status.attempt}, ${status.fork.slice(0, 10)}..${status.commit.slice(0, 10)}`);
    output.out(text);
    return EXIT.ok;
  }
  const attempt = record?.lastAttempt ?? 0;
  const patch = join(attemptDir(workspace.root, id, attempt), "diff.patch");
  if (attempt === 0 || !existsSync(patch)) {
    output.err(`${id} has no gated attempt to show a diff of${attempt ? ` (attempt ${attempt} ended before its gates)` : ""}; \`factory status ${id}\` shows its history`);
    return EXIT.invalid;
  }
  const text = readFileSync(patch, "utf8").trimEnd();
  if (options.json) {
    output.out(JSON.stringify({ schema: 1, packet: id, attempt, state: status?.state ?? "queued", source: "gated", from: null, to: null, diff: text }, null, 2));
    return EXIT.ok;
  }
  output.out(`# ${id}: attempt ${attempt} (${status?.state ?? "queued"}), as gated`);
  output.out(text);
  return EXIT.ok;
}
