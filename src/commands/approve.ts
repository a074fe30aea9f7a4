import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { diffStat } from "../git/diff.js";
import { resolveCommit } from "../git/repo.js";
import { appendEvents } from "../ledger/store.js";
import type { Output } from "../log/output.js";
import { createProgress } from "../log/progress.js";
import { Budget } from "../loop/budget.js";
import { attemptDir, taskBranch, type RunContext } from "../loop/context.js";
import { applyLanding } from "../loop/process-packet.js";
import { recordedAttempt } from "../loop/recorded-attempt.js";
import { checkSpecDrift } from "../loop/spec-drift.js";
import { land } from "../merge/land.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadPacketRecord, refuseAgents, personName } from "./packet-record.js";

export interface ApproveOptions {
  cwd: string;
  id: string;
  yes: boolean;
  output: Output;
  signal: AbortSignal;
  /** Where the typed confirmation comes from; a TTY unless scripted. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/**
 * The human gate: shows the change and the review, asks the person to type
 * the packet id (or --yes), records who approved which tree, and lands
 * exactly that tree (re-gated if the target moved).
 */
export async function approve(options: ApproveOptions): Promise<ExitCode> {
  const { output, id } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory approve refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const loaded = await loadPacketRecord(options.cwd, id, output);
  if (!loaded) return EXIT.invalid;
  const { workspace, packet, record } = loaded;
  const status = record?.status;
  if (!packet || !record || status?.state !== "awaiting_human") {
    output.err(`${id} is ${status?.state ?? "queued"}, not awaiting_human; only a held packet can be approved`);
    return EXIT.invalid;
  }
  if (record.sha256 !== packet.sha256) {
    output.err(`${id}'s packet file changed since the attempt was held; the held work is for the old version. The next \`factory run\` runs the new one.`);
    return EXIT.invalid;
  }
  const branchHead = await resolveCommit(workspace.root, taskBranch(id));
  if (branchHead !== status.commit) {
    output.err(`${taskBranch(id)} no longer points at the held commit ${status.commit.slice(0, 10)}; nothing was approved. \`factory reject ${id} --reason …\` sends it back.`);
    return EXIT.invalid;
  }

  // The spec may have moved while the work waited for a person: approving it would land work cut from an old spec.
  const drift = await checkSpecDrift(workspace.root, packet, workspace.tip);
  if (drift) {
    await appendEvents(workspace.root, [{ kind: "blocked", packet: id, attempt: status.attempt, reason: drift }]);
    output.err(`factory approve refused: ${drift}. ${id} is now blocked; after re-cutting it, \`factory reset ${id}\` queues it again.`);
    return EXIT.halted;
  }

  output.out(`${id}: ${packet.goal}`);
  output.out(`held attempt ${status.attempt}, tree ${status.tree.slice(0, 12)}, branch ${status.branch}\n`);
  output.out((await diffStat(workspace.root, status.fork, status.commit)).trimEnd());
  output.out("");
  output.out(reviewSummary(workspace.root, id, status.attempt));

  if (!options.yes) {
    if (!options.input.isTTY) {
      output.err(`factory approve needs a person: run it in a terminal and type ${id}, or pass --yes when you script it yourself.`);
      return EXIT.invalid;
    }
    const prompt = createInterface({ input: options.input, output: process.stdout });
    const typed = (await prompt.question(`Type ${id} to approve and merge: `)).trim();
    prompt.close();
    if (typed !== id) {
      output.err("Not approved: the id did not match. Nothing changed.");
      return EXIT.invalid;
    }
  }
  const by = await personName(workspace.root);
  await appendEvents(workspace.root, [{ kind: "approved", packet: id, by, tree: status.tree }]);
  const config = workspace.config;
  if (!config) return EXIT.invalid;

  const progress = createProgress(output, undefined);
  const ctx: RunContext = {
    root: workspace.root, config, branch: workspace.branch, emit: progress.emit, signal: options.signal,
    owner: { run: `approve-${Date.now()}`, pid: process.pid, host: "" }, adapters: new Map(), budget: new Budget(undefined),
  };
  const { planted, gates, counts } = recordedAttempt(record, status.attempt);
  const landed = await land(ctx, {
    packet, attempt: status.attempt, commit: status.commit, fork: status.fork, runDir: attemptDir(workspace.root, id, status.attempt),
    planted: planted?.files ?? [], plantedCases: planted?.cases ?? {}, plantedCommit: planted?.commit ?? status.fork,
    provenance: { attempt: status.attempt, gates, counts, approvedBy: by },
  });
  const outcome = await applyLanding(ctx, {
    packet, attempt: status.attempt, landed, report: { end: { kind: "environment-error", reason: "" }, forkCommit: status.fork, commit: status.commit, gates },
    attemptsUsed: record.attemptsUsed, maxAttempts: packet.maxAttempts + record.extraAttempts,
  });
  if (outcome.kind === "merged") {
    output.out(`Approved by ${by} and merged into ${workspace.branch} as ${outcome.commit.slice(0, 10)}.`);
    return EXIT.ok;
  }
  output.err(`Approved by ${by}, but not merged: ${outcome.kind === "merge-blocked" ? `${outcome.reason}. The next \`factory run\` lands it.` : outcome.kind}`);
  return EXIT.halted;
}

function reviewSummary(root: string, id: string, attempt: number): string {
  const file = join(attemptDir(root, id, attempt), "reviewer-output.json");
  if (!existsSync(file)) return "(no review file was kept)";
  try {
    const review = JSON.parse(readFileSync(file, "utf8")) as {
      verdict?: string; invariants?: { id: string; status: string; evidence?: string }[]; findings?: { severity: string; claim: string }[];
    };
    return [
      `Review: ${review.verdict ?? "?"}`,
      ...(review.invariants ?? []).map((ruling) => `  ${ruling.status.padEnd(12)} ${ruling.id}${ruling.evidence ? `  (${ruling.evidence})` : ""}`),
      ...(review.findings ?? []).map((finding) => `  ${finding.severity}: ${finding.claim}`),
      "",
    ].join("\n");
  } catch {
    return "(the review file could not be read)";
  }
}
