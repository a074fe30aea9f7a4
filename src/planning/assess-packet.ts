import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { correctionPrompt } from "../agents/prompt.js";
import { readFileAt } from "../git/repo.js";
import { createWorktree, removeWorktree } from "../git/worktree.js";
import { callAgent } from "../loop/agent-call.js";
import { type RunContext, worktreesDir } from "../loop/context.js";
import { plant } from "../loop/prepare.js";
import { pinnedSpec } from "../loop/spec-drift.js";
import type { Packet } from "../packet/types.js";
import { lineCount, parseEvidence } from "../review/contract.js";
import { ASSESSMENT_OUTPUT, type Assessment, assessmentContract, assessorPrompt, evidenceProblems, validateAssessment } from "./assessment.js";

export type AssessOutcome = { kind: "ruled"; assessment: Assessment } | { kind: "unusable"; problem: string } | { kind: "failed"; problem: string };

export interface AssessInput {
  packet: Packet;
  /** The packet file's text at the tip. */
  packetText: string;
  tip: string;
  tier: string;
  runDir: string;
  template?: string;
  conventions?: string;
}

/**
 * One packet's assessment: the assessor reads the packet, its planted files
 * (planted in a scratch checkout of the tip, where it runs) and the spec at
 * spec_commit, and writes a ruling. The factory checks its shape and its
 * evidence (every quote occurs in the spec, every `path:line` exists in the
 * tip with the planted files, read from git, not from the checkout the
 * assessor could write), with one correction round, as for a review. Each
 * call is recorded in the ledger with its cost (role "assessor", attempt 0).
 */
export async function assessPacket(ctx: RunContext, input: AssessInput): Promise<AssessOutcome> {
  const { packet } = input;
  const spec = await pinnedSpec(ctx.root, packet);
  if (!spec.ok) return { kind: "failed", problem: `${packet.file}: ${spec.problem}` };
  mkdirSync(input.runDir, { recursive: true });
  const worktree = join(worktreesDir(ctx.root), `_assess-${process.pid}`);
  await removeWorktree(ctx.root, worktree); // the last packet's, if its removal was cut short
  await createWorktree(ctx.root, { path: worktree, start: input.tip });
  try {
    const planted = await plant(ctx, worktree, packet, input.tip);
    const prompt = assessorPrompt(
      {
        id: packet.id,
        goal: packet.goal,
        packetFile: packet.file,
        packetText: input.packetText,
        planted: planted.files,
        specPath: packet.specPath,
        specCommit: spec.commit,
        spec: spec.text,
        ...(input.conventions ? { conventions: input.conventions } : {}),
        outputPath: ASSESSMENT_OUTPUT,
      },
      input.template,
    );
    const call = { role: "assessor" as const, packet: packet.id, attempt: 0, tier: input.tier, worktree, runDir: input.runDir, output: ASSESSMENT_OUTPUT };
    let result = await callAgent(ctx, { ...call, round: 0, fresh: true, prompt });
    if (result.outcome.status !== "ok") return { kind: "failed", problem: `the assessor's call ended ${result.outcome.status}${result.outcome.detail ? `: ${result.outcome.detail}` : ""}` };
    const read = async (): Promise<{ errors: string[]; assessment?: Assessment }> => {
      const check = validateAssessment(result.json, packet.id);
      if (!check.ok) return { errors: check.errors };
      const lines = await lineCounts(worktree, planted.commit, check.assessment);
      return { errors: evidenceProblems(check.assessment, { spec: spec.text, lines: (path) => lines.get(path) }), assessment: check.assessment };
    };
    let got = await read();
    if (got.errors.length > 0) {
      const sessionId = result.outcome.sessionId;
      result = await callAgent(ctx, {
        ...call,
        round: 1,
        prompt: correctionPrompt("assessment", ASSESSMENT_OUTPUT, got.errors, assessmentContract(packet.id, ASSESSMENT_OUTPUT)),
        ...(sessionId ? { resumeSession: sessionId } : {}),
      });
      if (result.outcome.status !== "ok")
        return { kind: "failed", problem: `the assessor's correction call ended ${result.outcome.status}${result.outcome.detail ? `: ${result.outcome.detail}` : ""}` };
      got = await read();
    }
    if (got.errors.length > 0 || !got.assessment) return { kind: "unusable", problem: got.errors.join("; ") };
    return { kind: "ruled", assessment: got.assessment };
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/** The line count of every file the findings cite, as committed at `commit`; a file that is not there is left out. */
async function lineCounts(worktree: string, commit: string, assessment: Assessment): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const finding of assessment.findings) {
    const where = finding.where ? parseEvidence(finding.where) : undefined;
    if (!where || counts.has(where.path)) continue;
    const text = await readFileAt(worktree, commit, where.path);
    if (text !== undefined) counts.set(where.path, lineCount(text));
  }
  return counts;
}
