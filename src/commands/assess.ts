import { hostname } from "node:os";
import { join } from "node:path";
import { adapterFor } from "../agents/index.js";
import { projectTemplate } from "../agents/prompt-templates.js";
import type { AgentAdapter } from "../agents/types.js";
import { readFileAt } from "../git/repo.js";
import { type Output, paint } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { CONVENTIONS_FILE } from "../loop/attempt.js";
import { Budget, BudgetExhausted } from "../loop/budget.js";
import { Interrupted, RUNS_DIR, type RunContext } from "../loop/context.js";
import { sweepLeftovers } from "../loop/leftovers.js";
import { AgentWaits } from "../loop/rate-limits.js";
import type { Packet } from "../packet/types.js";
import { type AssessOutcome, assessPacket } from "../planning/assess-packet.js";
import { advancedTier } from "../planning/policy.js";
import { checkSandbox, SANDBOX_HELP } from "../process/sandbox.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { openPackets } from "./status.js";
import { loadWorkspace, type Workspace } from "./workspace.js";

export interface AssessOptions {
  cwd: string;
  ids: string[];
  /** Every packet not yet merged. */
  all: boolean;
  /** The tier whose agent assesses; default `[planning] tier`, else "advanced", else the strongest. */
  tier: string | undefined;
  output: Output;
  signal: AbortSignal;
}

/**
 * `factory assess <ID>… | --all`: an assessor agent rules each packet
 * `ready`, `recut` or `reject` before anything is spent on implementing it;
 * the factory checks the ruling's evidence and records it in the ledger,
 * pinned to the packet's version. Exit 0 when every packet is ready, 1 when
 * any is not or could not be assessed, 2 for bad input.
 */
export async function assess(options: AssessOptions): Promise<ExitCode> {
  const { output } = options;
  const load = await loadWorkspace(options.cwd, { trustCache: false });
  if (!load.ok || load.workspace.problems.length > 0 || !load.workspace.config) {
    for (const problem of load.ok ? load.workspace.problems : load.problems) output.err(formatProblem(problem));
    output.err("factory assess: nothing was assessed; fix the problems above (`factory lint` lists them).");
    return EXIT.invalid;
  }
  const { workspace } = load;
  const config = workspace.config as NonNullable<typeof workspace.config>;
  const chosen = await choosePackets(workspace, options);
  if (!chosen.ok) {
    output.err(`factory assess: ${chosen.problem}`);
    return EXIT.invalid;
  }
  const tierName = options.tier ?? config.planning.tier ?? advancedTier(config.tiers.map((tier) => tier.name));
  const tier = config.tiers.find((candidate) => candidate.name === tierName);
  const agent = tier ? config.agents[tier.agent] : undefined;
  if (!tier || !agent) {
    output.err(`factory assess: no tier "${tierName ?? ""}" with an agent in .factory/config.toml; choose one with --tier, or set [planning] tier`);
    return EXIT.invalid;
  }
  const lookup = adapterFor(agent);
  if (!lookup.ok) {
    output.err(`factory assess: .factory/config.toml: ${lookup.reason}`);
    return EXIT.invalid;
  }
  if (config.sandbox.kind === "bwrap") {
    const sandbox = await checkSandbox(workspace.root);
    if (!sandbox.ok) {
      output.err(`factory assess: the sandbox cannot start: ${sandbox.reason}; ${SANDBOX_HELP}`);
      return EXIT.invalid;
    }
  }
  const template = await projectTemplate(workspace.root, workspace.tip, "assessor");
  if (!template.ok) {
    output.err(`factory assess: ${template.problem}`);
    return EXIT.invalid;
  }
  await sweepLeftovers(workspace.root);
  const stamp = new Date().toISOString().replaceAll(":", "-");
  const ctx = assessContext(workspace, { adapter: lookup.adapter, agent: agent.name, stamp, output, signal: options.signal });
  const conventions = await readFileAt(workspace.root, workspace.tip, CONVENTIONS_FILE);
  const rows: Row[] = [];
  for (const packet of chosen.packets) {
    const before = ctx.budget.spentUsd;
    let outcome: AssessOutcome;
    try {
      output.err(`assessing ${packet.id} (tier ${tier.name})…`);
      outcome = await assessPacket(ctx, {
        packet,
        packetText: (await readFileAt(workspace.root, workspace.tip, packet.file)) ?? "",
        tip: workspace.tip,
        tier: tier.name,
        runDir: join(workspace.root, RUNS_DIR, `assess-${stamp}`, packet.id),
        ...(template.template !== undefined ? { template: template.template } : {}),
        ...(conventions ? { conventions } : {}),
      });
    } catch (error) {
      if (error instanceof Interrupted) {
        output.err("factory assess: interrupted; the rulings above are recorded.");
        return EXIT.interrupted;
      }
      if (!(error instanceof BudgetExhausted)) throw error;
      outcome = { kind: "failed", problem: `[planning] max_cost_usd ($${ctx.budget.capUsd?.toFixed(2)}) is reached; raise it, or assess the rest another time (factory assess ${packet.id})` };
    }
    if (outcome.kind === "ruled") {
      const { ruling, findings } = outcome.assessment;
      await workspace.ledger.append([{ kind: "assessed", packet: packet.id, sha256: packet.sha256, ruling, tier: tier.name, findings: findings.map(recordedFinding) }]);
    }
    rows.push({ packet, outcome, costUsd: ctx.budget.spentUsd - before });
  }
  await printRows(output, rows, ctx.budget.spentUsd);
  return rows.every((row) => row.outcome.kind === "ruled" && row.outcome.assessment.ruling === "ready") ? EXIT.ok : EXIT.halted;
}

interface Row {
  packet: Packet;
  outcome: AssessOutcome;
  costUsd: number;
}

type Chosen = { ok: true; packets: Packet[] } | { ok: false; problem: string };

async function choosePackets(workspace: Workspace, options: AssessOptions): Promise<Chosen> {
  if (options.all && options.ids.length > 0) return { ok: false, problem: "name packets or give --all, not both" };
  if (options.all) {
    const open = await openPackets(workspace);
    return open.length > 0 ? { ok: true, packets: open } : { ok: false, problem: `every packet on ${workspace.branch} is merged; there is nothing to assess` };
  }
  if (options.ids.length === 0) return { ok: false, problem: "name the packets to assess (factory assess P01 P02), or give --all for every packet not yet merged" };
  const unknown = options.ids.filter((id) => !workspace.queue.packets.some((packet) => packet.id === id));
  if (unknown.length > 0) return { ok: false, problem: `no packet ${unknown.map((id) => `"${id}"`).join(", ")} on ${workspace.branch}` };
  return { ok: true, packets: workspace.queue.packets.filter((packet) => options.ids.includes(packet.id)) };
}

/** What an agent call needs, for a command that is not a run: its own budget ([planning] max_cost_usd), notices on stderr. */
function assessContext(workspace: Workspace, input: { adapter: AgentAdapter; agent: string; stamp: string; output: Output; signal: AbortSignal }): RunContext {
  const config = workspace.config as NonNullable<typeof workspace.config>;
  return {
    root: workspace.root,
    ledger: workspace.ledger,
    config,
    branch: workspace.branch,
    owner: { run: `assess-${input.stamp}`, pid: process.pid, host: hostname() },
    emit: (event) => {
      if (event.kind === "notice") input.output.err(`notice: ${event.message}`);
    },
    signal: input.signal,
    adapters: new Map([[input.agent, input.adapter]]),
    budget: new Budget(config.planning.maxCostUsd),
    waits: new AgentWaits(),
  };
}

/** A finding as the ledger keeps it: bounded, since its text is the agent's. */
function recordedFinding(finding: { claim: string; quote?: string; where?: string }): { claim: string; quote?: string; where?: string } {
  const clip = (text: string): string => (text.length <= 500 ? text : `${text.slice(0, 500)}…`);
  return { claim: clip(finding.claim), ...(finding.quote ? { quote: clip(finding.quote) } : {}), ...(finding.where ? { where: finding.where } : {}) };
}

async function printRows(output: Output, rows: readonly Row[], spentUsd: number): Promise<void> {
  const table = rows.map((row) => {
    const { outcome } = row;
    const verdict = outcome.kind === "ruled" ? outcome.assessment.ruling : outcome.kind === "unusable" ? "unusable" : "not assessed";
    const color = verdict === "ready" ? "green" : verdict === "recut" ? "yellow" : "red";
    return [row.packet.id, paint(output, color, verdict), outcome.kind === "ruled" ? String(outcome.assessment.findings.length) : "-", `$${row.costUsd.toFixed(2)}`, row.packet.goal];
  });
  output.out(await renderTable(["ID", "RULING", "FINDINGS", "COST", "GOAL"], table));
  for (const { packet, outcome } of rows) {
    if (outcome.kind !== "ruled") {
      output.out(`\n${packet.id}: ${outcome.kind === "unusable" ? "the assessor's ruling is unusable, nothing was recorded" : "not assessed"}: ${outcome.problem}`);
      continue;
    }
    if (outcome.assessment.findings.length === 0) continue;
    output.out(`\n${packet.id} (${outcome.assessment.ruling}):`);
    for (const finding of outcome.assessment.findings) {
      output.out(`  - ${finding.claim}${finding.where ? ` (${finding.where})` : ""}${finding.fix ? ` — fix: ${finding.fix}` : ""}`);
      if (finding.quote) output.out(`    spec: "${finding.quote.replace(/\s+/g, " ").trim()}"`);
    }
  }
  output.out(`\nspent $${spentUsd.toFixed(2)} (recorded in the ledger)`);
}
