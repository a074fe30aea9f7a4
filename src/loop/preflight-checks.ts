import { join } from "node:path";
import { adapterFor } from "../agents/index.js";
import { PROJECT_PROMPTS_DIR, projectTemplate } from "../agents/prompt-templates.js";
import { shellProgram } from "../agents/shell-program.js";
import type { AgentAdapter } from "../agents/types.js";
import type { Config } from "../config/types.js";
import { realCases } from "../gates/test-compare.js";
import { leftGitLocks, lockLeftMessage } from "../git/locks.js";
import { gitTry, signingProblem, wantsSignedCommits } from "../git/repo.js";
import type { Packet } from "../packet/types.js";
import { checkSandbox, SANDBOX_HELP } from "../process/sandbox.js";
import { hasBaseline, measureBaseline } from "./baseline.js";
import { RUNS_DIR } from "./context.js";
import { checkModels, findProgram, missingAgentPrograms, type ProbeSpend } from "./preflight.js";
import { pinnedSpec } from "./spec-drift.js";

/** One preflight check: what was checked and, when it failed, why and the fix. */
export interface Check {
  what: string;
  problem?: string;
}

export interface Preflight {
  checks: Check[];
  adapters: Map<string, AgentAdapter>;
  /** The model probes' spends, for the ledger and the run's budget. */
  spends: ProbeSpend[];
  /** Whole-tree gates red at the tip that queued packets repair: until those land, the surface's other packets wait for them. */
  repairing: Repairing[];
}

export interface Repairing {
  surface: string;
  /** The gates red at the tip. */
  gates: string[];
  /** The packets that repair one of them. */
  packets: string[];
}

const SHELL_WORDS = new Set(["for", "if", "while", "until", "case", "export", "set", "source", ".", "exit", "time"]);

/**
 * Pure: the program a gate's or install's command line starts, when it names one plainly on PATH (past
 * assignments, exec and cd steps, as the shell finds it; not a keyword, a variable or a relative path
 * that an install may create).
 */
export function commandProgram(line: string): string | undefined {
  const program = shellProgram(line);
  if (program === undefined || SHELL_WORDS.has(program) || program.includes("$") || program.includes("/")) return undefined;
  return program;
}

/** What a shallow clone is told: what it lacks, and the command that fetches it. */
export const SHALLOW_PROBLEM =
  "this checkout is a shallow clone (git clone --depth): it lacks the commits packets are pinned to (spec_commit) and the target's history the landings are read from; fetch the whole history with `git fetch --unshallow`, then run again (the packets need no change)";

type PreflightInput = Parameters<typeof preflight>[0];

/**
 * Everything `run` checks before anything is claimed or spent (`doctor`
 * prints it): the sandbox starts, each agent the queue uses has an adapter
 * and its program, each surface's directory exists at the tip and its
 * install and gate programs are on PATH, and (unless told not to) each
 * tier's model answers as configured.
 */
export async function preflight(input: {
  root: string;
  config: Config;
  tip: string;
  packets: readonly Packet[];
  models: boolean;
  /**
   * Measure each used surface's baseline at the tip (cached there, so the first packets reuse it).
   * `worker`: several workers may share a checkout on a PostgreSQL ledger; each measures in a directory of its own.
   */
  baseline?: { signal: AbortSignal; worker?: string };
  /** Every tier and surface the config names, whether or not a queued packet uses it yet (doctor: before the first packet is committed). */
  everything?: boolean;
  /** Told before each step that may take a while (the sandbox, an agent CLI, a baseline, the model probes), so a person sees what runs. */
  say?: (step: string) => void;
}): Promise<Preflight> {
  const say = input.say ?? (() => undefined);
  const checks: Check[] = [];
  checks.push(...(await repositoryChecks(input, say)));
  const tiersUsed = new Set(input.everything ? input.config.tiers.map((tier) => tier.name) : input.packets.flatMap((packet) => [packet.tier, packet.reviewer]));
  const adapters = adaptersFor(input.config, tiersUsed, checks);
  checks.push(...(await agentProgramChecks(input, adapters, say)));
  const surfacesUsed = new Set(input.everything ? input.config.surfaces.map((surface) => surface.name) : input.packets.map((packet) => packet.surface));
  checks.push(...(await surfaceChecks(input, surfacesUsed)));
  checks.push(...(await historyChecks(input)));
  const repairing: Repairing[] = [];
  if (input.baseline && checks.every((check) => !check.problem)) checks.push(...(await baselineChecks(input, input.baseline, surfacesUsed, repairing, say)));
  checks.push(...(await templateChecks(input)));
  let spends: ProbeSpend[] = [];
  if (input.models && checks.every((check) => !check.problem)) {
    say("asking each tier's model for one short answer (a paid probe: the models are named as configured)");
    const models = await checkModels({ root: input.root, config: input.config, tiers: tiersUsed, adapters });
    spends = models.spends;
    for (const line of models.answered) checks.push({ what: line });
    for (const refusal of models.refusals) checks.push({ what: "a tier's model answers as configured", problem: refusal });
  }
  return { checks, adapters, spends, repairing };
}

/** The sandbox starts; no git lock is left; a commit signs here when the user's configuration says it must. */
async function repositoryChecks(input: PreflightInput, say: (step: string) => void): Promise<Check[]> {
  const { config, root } = input;
  const checks: Check[] = [];
  if (config.sandbox.kind === "bwrap") {
    say("starting the sandbox (bubblewrap) once");
    const sandbox = await checkSandbox(root);
    checks.push({ what: "sandbox (bubblewrap) starts", ...(sandbox.ok ? {} : { problem: `the sandbox cannot start: ${sandbox.reason}; ${SANDBOX_HELP}` }) });
  } else {
    checks.push({ what: 'sandbox: [sandbox] kind = "none" (agents and gates run uncontained)' });
  }

  // A lock file a killed git command left would stop the first landing, after the money is spent.
  const locks = await leftGitLocks(root, config.targetBranch);
  checks.push({ what: "no git lock file is left in the repository", ...(locks.length ? { problem: locks.map(lockLeftMessage).join("; and ") } : {}) });

  // The landing signs its commit when the user's configuration says so: proven before anything is paid for, never turned off.
  if (await wantsSignedCommits(root)) {
    const probe = ["commit-tree", "-S", `${input.tip}^{tree}`, "-p", input.tip, "-m", "factory: can a commit be signed here?"];
    const signed = await gitTry(root, probe, { identity: true, signed: true });
    checks.push({
      what: "commit.gpgsign: git signs a commit here the way the landing will",
      ...(signed.ok ? {} : { problem: signingProblem(signed.message) }),
    });
  }
  return checks;
}

/** The adapter of each agent the used tiers name; an agent with none is a check that failed. */
function adaptersFor(config: Config, tiersUsed: ReadonlySet<string | undefined>, checks: Check[]): Map<string, AgentAdapter> {
  const adapters = new Map<string, AgentAdapter>();
  for (const tier of config.tiers.filter((candidate) => tiersUsed.has(candidate.name))) {
    const agent = config.agents[tier.agent];
    if (!agent || adapters.has(agent.name)) continue;
    const lookup = adapterFor(agent);
    if (lookup.ok) adapters.set(agent.name, lookup.adapter);
    else checks.push({ what: `agent "${agent.name}" has an adapter`, problem: `.factory/config.toml: ${lookup.reason}` });
  }
  return adapters;
}

/** Each agent's program is found and answers `--version`. */
async function agentProgramChecks(input: PreflightInput, adapters: ReadonlyMap<string, AgentAdapter>, say: (step: string) => void): Promise<Check[]> {
  const { config, root } = input;
  const checks: Check[] = [];
  const missingAgents = missingAgentPrograms({ config, agents: new Set(adapters.keys()), path: process.env.PATH, root });
  for (const [name, adapter] of adapters) {
    const problem = missingAgents.find((refusal) => refusal.startsWith(`agent "${name}"`));
    checks.push({ what: `agent "${name}": its program is found`, ...(problem ? { problem } : {}) });
    if (problem || !adapter.version) continue;
    // Found is not enough: a CLI whose install is broken, or that needs another Node, fails only when it starts.
    say(`asking agent "${name}" for its version`);
    const version = await adapter.version();
    const bin = config.agents[name]?.bin ?? config.agents[name]?.kind ?? name;
    checks.push({
      what: `agent "${name}": \`${bin} --version\` answers${version ? ` (${version})` : ""}`,
      ...(version ? {} : { problem: `agent "${name}": \`${bin} --version\` did not answer, so the CLI does not start here; reinstall it, or fix [agents.${name}] bin in .factory/config.toml` }),
    });
  }
  return checks;
}

/** Each used surface's directory exists at the tip, and its install's and gates' programs are on PATH. */
async function surfaceChecks(input: PreflightInput, surfacesUsed: ReadonlySet<string | undefined>): Promise<Check[]> {
  const { config, root } = input;
  const checks: Check[] = [];
  for (const surface of config.surfaces.filter((candidate) => surfacesUsed.has(candidate.name))) {
    if (surface.dir !== ".") {
      const type = await gitTry(root, ["cat-file", "-t", `${input.tip}:${surface.dir}`]);
      const exists = type.ok && type.out.trim() === "tree";
      checks.push({
        what: `surface "${surface.name}": dir "${surface.dir}" exists`,
        ...(exists
          ? {}
          : { problem: `surface "${surface.name}": dir "${surface.dir}" is not a directory at the tip of ${config.targetBranch}; fix [surfaces.${surface.name}] dir in .factory/config.toml` }),
      });
    }
    const lines: [string, string | undefined][] = [
      ["install", surface.install],
      ...surface.gates.flatMap((gate): [string, string | undefined][] => [
        [`gate "${gate.name}"`, gate.run],
        [`gate "${gate.name}" fix`, gate.fix],
      ]),
    ];
    for (const [what, line] of lines) {
      const program = line ? commandProgram(line) : undefined;
      if (!program) continue;
      const found = findProgram(program, process.env.PATH, root);
      checks.push({
        what: `surface "${surface.name}": ${what} program "${program}" is on PATH`,
        ...(found ? {} : { problem: `surface "${surface.name}": ${what} runs "${program}", which is not on PATH; install it, or fix [surfaces.${surface.name}] in .factory/config.toml` }),
      });
    }
  }
  return checks;
}

/** The checkout has its whole history, and each packet's pinned spec resolves in it. */
async function historyChecks(input: PreflightInput): Promise<Check[]> {
  // A shallow clone lacks the commits packets are pinned to and the history the landing reads trailers in: one line, not one per packet.
  const shallowAnswer = await gitTry(input.root, ["rev-parse", "--is-shallow-repository"]);
  const shallow = shallowAnswer.ok && shallowAnswer.out.trim() === "true";
  const checks: Check[] = [{ what: "the checkout has its whole history (not a shallow clone)", ...(shallow ? { problem: SHALLOW_PROBLEM } : {}) }];
  for (const packet of shallow ? [] : input.packets) {
    const spec = await pinnedSpec(input.root, packet);
    checks.push({ what: `packet ${packet.id}: spec_commit and spec_path resolve`, ...(spec.ok ? {} : { problem: `${packet.file}: ${spec.problem}` }) });
  }
  return checks;
}

/** Each used surface's gates at the tip (cached for the packets); whole-tree gates red there that queued packets repair go to `repairing`. */
async function baselineChecks(
  input: PreflightInput,
  baseline: NonNullable<PreflightInput["baseline"]>,
  surfacesUsed: ReadonlySet<string | undefined>,
  repairing: Repairing[],
  say: (step: string) => void,
): Promise<Check[]> {
  const { config, root } = input;
  const checks: Check[] = [];
  const ctx = { root, config, signal: baseline.signal };
  for (const surface of config.surfaces.filter((candidate) => surfacesUsed.has(candidate.name) && hasBaseline(candidate))) {
    const worker = baseline.worker?.replace(/[^A-Za-z0-9_.-]/g, "_");
    const repairers = input.packets.filter((packet) => packet.surface === surface.name && packet.repairs.length > 0);
    const repairs = [...new Set(repairers.flatMap((packet) => packet.repairs))];
    say(`measuring surface "${surface.name}" at ${input.tip.slice(0, 10)}: its install and gates at the tip (kept for the packets; cached for the next run)`);
    const measured = await measureBaseline(ctx, { surface, commit: input.tip, runDir: join(root, RUNS_DIR, "preflight", ...(worker ? [`worker-${worker}`] : [])), outside: true, repairs });
    const red = measured.ok ? (measured.red ?? []) : [];
    const by = repairers.filter((packet) => packet.repairs.some((gate) => red.includes(gate))).map((packet) => packet.id);
    if (red.length > 0) repairing.push({ surface: surface.name, gates: red, packets: by });
    checks.push({
      what: `surface "${surface.name}": the gates run at the tip (the tests gates' suite, and every whole-tree gate green${red.length ? `; red: ${red.map((gate) => `"${gate}"`).join(", ")}, which ${by.join(", ")} repair${by.length === 1 ? "s" : ""}` : ""})${measured.ok ? ` (${[...measured.results.values()].reduce((sum, results) => sum + realCases(results).length, 0)} test cases${measured.cached ? ", cached" : ""})` : ""}`,
      ...(measured.ok ? {} : { problem: `surface "${surface.name}": the baseline at ${input.tip.slice(0, 10)} fails: ${measured.reason}` }),
    });
  }
  return checks;
}

/** The project's own prompt templates, where it has them, fill. */
async function templateChecks(input: PreflightInput): Promise<Check[]> {
  const checks: Check[] = [];
  for (const role of ["implementer", "reviewer"] as const) {
    const template = await projectTemplate(input.root, input.tip, role);
    if (!template.ok) checks.push({ what: `the project's ${role} prompt template`, problem: template.problem });
    else if (template.template !== undefined) checks.push({ what: `the project's ${role} prompt template (${PROJECT_PROMPTS_DIR}/${role}.md) fills` });
  }
  return checks;
}
