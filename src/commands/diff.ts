import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { diffText } from "../git/diff.js";
import type { Output } from "../log/output.js";
import { attemptDir } from "../loop/context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadPacketRecord } from "./packet-record.js";

export interface DiffOptions {
  cwd: string;
  id: string;
  output: Output;
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
    output.out(`# ${id}: held attempt ${status.attempt}, ${status.fork.slice(0, 10)}..${status.commit.slice(0, 10)}`);
    output.out((await diffText(workspace.root, status.fork, status.commit)).trimEnd());
    return EXIT.ok;
  }
  const attempt = record?.lastAttempt ?? 0;
  const patch = join(attemptDir(workspace.root, id, attempt), "diff.patch");
  if (attempt === 0 || !existsSync(patch)) {
    output.err(`${id} has no gated attempt to show a diff of${attempt ? ` (attempt ${attempt} ended before its gates)` : ""}; \`factory status ${id}\` shows its history`);
    return EXIT.invalid;
  }
  output.out(`# ${id}: attempt ${attempt} (${status?.state ?? "queued"}), as gated`);
  output.out(readFileSync(patch, "utf8").trimEnd());
  return EXIT.ok;
}
