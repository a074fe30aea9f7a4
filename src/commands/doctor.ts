import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import { adapterFor } from "../agents/index.js";
import type { AgentAdapter } from "../agents/types.js";
import { forgeProtectionLine } from "../doctor/forge-protection.js";
import { type ProofContext, proveGuards } from "../doctor/guard-proof.js";
import { canaryLine, mutantCanaryLine, type ProofLine } from "../doctor/probes.js";
import { type CanaryResult, mutantCanary, reviewerCanary } from "../doctor/reviewer-canary.js";
import { checkLedger } from "../ledger/open.js";
import { joined, type Output, paint } from "../log/output.js";
import { factoryHomeWarning, Interrupted, RUNS_DIR } from "../loop/context.js";
import { sweepLeftovers } from "../loop/leftovers.js";
import { preflight } from "../loop/preflight-checks.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { openPackets } from "./status.js";
import { loadWorkspace, type Workspace } from "./workspace.js";

export interface DoctorOptions {
  cwd: string;
  /** Also ask each tier's model one tiny question (what `run` does; it costs a little). */
  models: boolean;
  /** Prove the guards armed in a scratch worktree (runs each tests gate's suite four times). */
  guards: boolean;
  /** Also run the reviewer canary (one paid review call per reviewer tier). */
  reviewer: boolean;
  output: Output;
  signal: AbortSignal;
  /** Print `DoctorReport` as JSON on stdout; the lines a person reads go to stderr. */
  json?: boolean;
}

/** What `doctor --json` prints: every check with its problem, and every proven guard or gate with its status. */
export interface DoctorReport {
  schema: 1;
  checks: { what: string; ok: boolean; problem: string | null }[];
  proofs: { what: string; status: "armed" | "NOT ARMED" | "unproven"; why: string | null }[];
  /** The exit code: 0 all armed where proven, 1 a check failed or something is NOT ARMED, 2 bad input. */
  exit: number;
}

/** `factory doctor`: every check `run` makes before it claims anything, one line each; exit 1 when any fails. */
export async function doctor(options: DoctorOptions): Promise<ExitCode> {
  if (!options.json) return examine(options, undefined);
  const report: DoctorReport = { schema: 1, checks: [], proofs: [], exit: 0 };
  // The person's lines still show, on stderr; stdout is the JSON alone.
  const text: Output = { ...options.output, out: (line) => options.output.err(line), outPieces: async (pieces) => options.output.err(joined(pieces).toString("utf8")) };
  const exit = await examine({ ...options, output: text }, report);
  report.exit = exit;
  options.output.out(JSON.stringify(report, null, 2));
  return exit;
}

async function examine(options: DoctorOptions, report: DoctorReport | undefined): Promise<ExitCode> {
  const { output } = options;
  const load = await loadWorkspace(options.cwd);
  if (!load.ok || load.workspace.problems.length > 0 || !load.workspace.config) {
    for (const problem of load.ok ? load.workspace.problems : load.problems) output.err(formatProblem(problem));
    output.err("factory doctor: fix the problems above first (`factory lint` lists them).");
    return EXIT.invalid;
  }
  const { workspace } = load;
  for (const warning of [...workspace.warnings, ...[factoryHomeWarning()].filter((place) => place !== undefined)]) output.err(`warning: ${warning}`);
  await sweepLeftovers(workspace.root); // a killed doctor's or run's scratch worktrees and sandbox directories
  const ledger = await checkLedger(workspace.ledger);
  report?.checks.push({ what: ledger.what, ok: !ledger.problem, problem: ledger.problem ?? null });
  output.out(ledger.problem ? `${paint(output, "red", "FAIL")}  ${ledger.what}\n      ${ledger.problem}` : `${paint(output, "green", "ok")}    ${ledger.what}`);
  if (ledger.problem) {
    output.out("\nThe ledger cannot be read: nothing else was checked, and `factory run` would refuse.");
    return EXIT.halted;
  }
  let checked: Awaited<ReturnType<typeof preflight>>;
  try {
    checked = await preflight({
      root: workspace.root,
      config: workspace.config as NonNullable<typeof workspace.config>,
      tip: workspace.tip,
      packets: await openPackets(workspace),
      models: options.models,
      // Every agent, tier and surface the config names: a doctor run before the first packet is committed checks them too.
      everything: true,
      // The guard proof measures the suite itself; without it, the preflight does.
      ...(options.guards ? {} : { baseline: { signal: options.signal } }),
    });
  } catch (error) {
    if (error instanceof Interrupted) return EXIT.interrupted;
    throw error;
  }
  for (const check of checked.checks) {
    report?.checks.push({ what: check.what, ok: !check.problem, problem: check.problem ?? null });
    output.out(check.problem ? `${paint(output, "red", "FAIL")}  ${check.what}\n      ${check.problem}` : `${paint(output, "green", "ok")}    ${check.what}`);
  }
  if (!options.models) output.out("-     models not asked (--no-models)");
  const failed = checked.checks.filter((check) => check.problem).length;
  output.out(failed ? `\n${failed} check(s) failed: \`factory run\` would refuse.` : "\nAll checks pass.");
  if (failed) return EXIT.halted;
  const ctx = { root: workspace.root, config: workspace.config as NonNullable<typeof workspace.config>, signal: options.signal };
  const runDir = join(ctx.root, RUNS_DIR, "doctor");
  rmSync(runDir, { recursive: true, force: true });
  const lines: ProofLine[] = [];
  try {
    if (options.guards) {
      output.out(`\nProving the guards in a scratch worktree of ${workspace.tip.slice(0, 10)} (each tests gate runs the suite five times, once outside the sandbox):`);
      lines.push(...printed(output, await proveGuards(ctx, { tip: workspace.tip, surfaces: ctx.config.surfaces, runDir })));
    } else {
      output.out("Guards not proven (--no-guards).");
    }
    if (options.reviewer) lines.push(...printed(output, await canary(ctx, workspace, checked.adapters, runDir, output)));
    const forge = await forgeProtectionLine(ctx.config, options.signal);
    if (forge) lines.push(...printed(output, [forge]));
  } catch (error) {
    if (error instanceof Interrupted) return EXIT.interrupted;
    throw error;
  }
  report?.proofs.push(
    ...lines.map((line) => ({
      what: line.what,
      status: line.notArmed ? ("NOT ARMED" as const) : line.unproven ? ("unproven" as const) : ("armed" as const),
      why: line.notArmed ?? line.unproven ?? null,
    })),
  );
  const notArmed = lines.filter((line) => line.notArmed).length;
  if (lines.length === 0) return EXIT.ok;
  const unproven = lines.filter((line) => line.unproven).length;
  // Unproven is never summarised as armed: doctor could not show those guards firing.
  const summary = notArmed
    ? `\n${notArmed} NOT ARMED: a packet could pass without doing the work (logs: ${relative(ctx.root, runDir)}).`
    : unproven
      ? `\nArmed where proven; ${unproven} unproven (above): doctor could not show ${unproven === 1 ? "it" : "them"} firing here.`
      : "\nEverything proven here is armed.";
  output.out(summary);
  return notArmed ? EXIT.halted : EXIT.ok;
}

function printed(output: Output, lines: ProofLine[]): ProofLine[] {
  for (const line of lines) {
    if (line.notArmed) output.out(`${paint(output, "red", "NOT ARMED")}  ${line.what}\n           ${line.notArmed}`);
    else if (line.unproven) output.out(`${paint(output, "yellow", "unproven")}   ${line.what}\n           ${line.unproven}`);
    else output.out(`${paint(output, "green", "armed")}      ${line.what}`);
  }
  return lines;
}

/** The reviewer canary on the first packet not yet merged, for every reviewer tier of the packets not yet merged. */
async function canary(ctx: ProofContext, workspace: Workspace, adapters: ReadonlyMap<string, AgentAdapter>, runDir: string, output: Output): Promise<ProofLine[]> {
  const packets = await openPackets(workspace);
  const packet = packets[0];
  // The reviewer tiers of the open packets, else of every packet (the mutant canary needs only a landed one).
  const tiers = [...new Set((packets.length ? packets : workspace.queue.packets).map((candidate) => candidate.reviewer))];
  const mutant = (): Promise<ProofLine[]> => onMutant(ctx, workspace, { tiers, adapters: withAdapters(ctx, tiers, adapters), runDir, output });
  if (!packet) return [{ what: "reviewer canary", unproven: "no packet in the queue is still to be merged, so there is no unimplemented work to show a reviewer" }, ...(await mutant())];
  output.out(`\nReviewer canary: ${tiers.length} reviewer tier(s) review ${packet.id} with its planted files and nothing implemented (one paid review call per tier):`);
  const results = await reviewerCanary(ctx, { tip: workspace.tip, packet, tiers, adapters, runDir });
  await recordCanarySpend(workspace, results, "doctor's reviewer canary");
  return [...results.map(canaryLine), ...(await mutant())];
}

/** `adapters` with one for every agent of `tiers` that the preflight did not need. */
function withAdapters(ctx: ProofContext, tiers: readonly string[], adapters: ReadonlyMap<string, AgentAdapter>): Map<string, AgentAdapter> {
  const all = new Map(adapters);
  for (const name of tiers) {
    const agent = ctx.config.agents[ctx.config.tiers.find((tier) => tier.name === name)?.agent ?? ""];
    const lookup = agent && !all.has(agent.name) ? adapterFor(agent) : undefined;
    if (agent && lookup?.ok) all.set(agent.name, lookup.adapter);
  }
  return all;
}

/** The mutant canary on the newest landed packet whose planted tests killed a mutant of its code (the mutation check's record). */
async function onMutant(
  ctx: ProofContext,
  workspace: Workspace,
  input: { tiers: readonly string[]; adapters: ReadonlyMap<string, AgentAdapter>; runDir: string; output: Output },
): Promise<ProofLine[]> {
  const { state } = await workspace.ledger.history();
  const found = workspace.queue.packets
    .flatMap((packet) => {
      const record = state.packets.get(packet.id);
      const landed = record?.status.state === "merged" ? record.status.commit : undefined;
      const measured = record?.events.findLast((event) => event.kind === "mutants-measured" && event.commit === landed);
      return measured?.kind === "mutants-measured" && measured.killedExample ? [{ packet, at: measured.ts, commit: measured.commit, mutant: measured.killedExample }] : [];
    })
    .sort((a, b) => b.at.localeCompare(a.at))[0];
  if (!found) return [{ what: "reviewer mutant canary", unproven: "no landed packet has a mutant its planted tests killed (the mutation check after a landing records one; [planning] mutants)" }];
  const mutant = `${found.mutant.file}:${found.mutant.line} ${found.mutant.description}`;
  input.output.out(`\nReviewer mutant canary: ${input.tiers.length} reviewer tier(s) review ${found.packet.id}'s change with a mutant its tests kill (${mutant}; one paid review call per tier):`);
  const results = await mutantCanary(ctx, { packet: found.packet, commit: found.commit, mutant: found.mutant, tiers: input.tiers, adapters: input.adapters, runDir: input.runDir });
  if (!results) return [{ what: "reviewer mutant canary", unproven: `the recorded mutant of ${found.packet.id} (${mutant}) could not be made again` }];
  await recordCanarySpend(workspace, results, "doctor's reviewer mutant canary");
  return results.map((result) => mutantCanaryLine(result, { packet: found.packet.id, mutant, invariants: found.packet.invariants.length }));
}

/** Paid calls that belong to no packet: recorded, so status counts them in what was spent. */
async function recordCanarySpend(workspace: Workspace, results: readonly CanaryResult[], what: string): Promise<void> {
  const spent = results.flatMap((result) => (result.spend ? [{ kind: "spent" as const, for: `${what} (tier ${result.tier})`, ...result.spend }] : []));
  if (spent.length > 0) await workspace.ledger.append(spent);
}
