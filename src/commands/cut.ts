import { readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { adapterFor } from "../agents/index.js";
import { projectTemplate } from "../agents/prompt-templates.js";
import type { Config } from "../config/types.js";
import { gitTry, readFileAt } from "../git/repo.js";
import { type Output, paint } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { CONVENTIONS_FILE } from "../loop/attempt.js";
import { Interrupted, RUNS_DIR } from "../loop/context.js";
import { sweepLeftovers } from "../loop/leftovers.js";
import { readQueueSources } from "../packet/load.js";
import { cutPackets, type PlaceInput, type Verdict } from "../planning/cut.js";
import { cutTier } from "../planning/cut-tier.js";
import { advancedTier } from "../planning/policy.js";
import { checkSandbox, SANDBOX_HELP } from "../process/sandbox.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspace, packetContext, type Workspace } from "./workspace.js";

export interface CutOptions {
  cwd: string;
  spec: string;
  scope: string | undefined;
  scopeFile: string | undefined;
  tier: string | undefined;
  /** An agent of the config to plan with, in place of the tier's: with `model`, else the model of a tier that uses it. */
  agent: string | undefined;
  model?: string | undefined;
  output: Output;
  signal: AbortSignal;
}

/**
 * `factory cut --spec <path> --scope "<text>" | --scope-file <file>`: a
 * planner agent proposes packets with planted tests; the factory judges
 * each (planning/cut.ts) and writes the accepted ones into the checkout,
 * untracked. Exit 0 when every proposal was accepted, 1 when any was refused
 * or none was made, 2 for bad input.
 */
export async function cut(options: CutOptions): Promise<ExitCode> {
  const { output } = options;
  const fail = (message: string): ExitCode => {
    output.err(`factory cut: ${message}`);
    return EXIT.invalid;
  };
  const load = await loadForCut(options.cwd, output);
  if (!load) return fail("nothing was cut; fix the problems above (`factory lint` lists them).");
  const { workspace, config } = load;
  const scope = readScope(options);
  if (!scope.ok) return fail(scope.problem);
  const spec = await specAtTip(workspace, options.cwd, options.spec);
  if (!spec.ok) return fail(spec.problem);
  const { path: specPath, commit: specCommit, text: specText } = spec;

  const tierName = options.tier ?? config.planning.tier ?? advancedTier(config.tiers.map((tier) => tier.name));
  const named = config.tiers.find((candidate) => candidate.name === tierName);
  if (!named) return fail(`no tier "${tierName ?? ""}" in .factory/config.toml; choose one with --tier, or set [planning] tier`);
  const chosen = cutTier(config, named, { agent: options.agent, model: options.model });
  if (!chosen.ok) return fail(chosen.problem);
  const { tier } = chosen;
  const agent = config.agents[tier.agent] as NonNullable<(typeof config.agents)[string]>;
  const lookup = adapterFor(agent);
  if (!lookup.ok) return fail(`.factory/config.toml: ${lookup.reason}`);
  if (config.planning.maxCostUsd === 0) return fail("[planning] max_cost_usd = 0 allows no planning call");
  const sandbox = await sandboxProblem(workspace.root, config);
  if (sandbox) return fail(sandbox);
  const template = await projectTemplate(workspace.root, workspace.tip, "cut");
  if (!template.ok) return fail(template.problem);

  await sweepLeftovers(workspace.root);
  const stamp = new Date().toISOString().replaceAll(":", "-");
  const runDir = resolve(workspace.root, RUNS_DIR, `cut-${stamp}`);
  const conventions = await readFileAt(workspace.root, workspace.tip, CONVENTIONS_FILE);
  output.err(`cutting packets from ${specPath} @ ${specCommit.slice(0, 10)} (tier ${tier.name}, agent ${tier.agent}, model ${tier.model})…`);
  const ctx = { root: workspace.root, config, signal: options.signal };
  let result: Awaited<ReturnType<typeof cutPackets>>;
  try {
    result = await cutPackets(ctx, {
      spec: { path: specPath, commit: specCommit, text: specText },
      scope: scope.text,
      tip: workspace.tip,
      tier,
      agent,
      adapter: lookup.adapter,
      ...(template.template !== undefined ? { template: template.template } : {}),
      ...(conventions ? { conventions } : {}),
      runDir,
      existing: await existingQueue(workspace),
      context: packetContext(config),
      ledger: workspace.ledger,
    });
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    output.err("factory cut: interrupted; nothing was written into your checkout.");
    return EXIT.interrupted;
  }
  if (!result.ok) {
    output.err(`factory cut: ${result.problem}`);
    return EXIT.halted;
  }
  await printVerdicts(output, result.verdicts, relative(workspace.root, runDir));
  for (const note of result.notes) output.err(`note: ${note}`);
  return result.verdicts.length > 0 && result.verdicts.every((verdict) => verdict.accepted) ? EXIT.ok : EXIT.halted;
}

type Scope = { ok: true; text: string } | { ok: false; problem: string };

function readScope(options: CutOptions): Scope {
  if (options.scope !== undefined && options.scopeFile !== undefined) return { ok: false, problem: "give --scope or --scope-file, not both" };
  let text = options.scope;
  if (options.scopeFile !== undefined) {
    try {
      text = readFileSync(resolve(options.cwd, options.scopeFile), "utf8");
    } catch (error) {
      return { ok: false, problem: `${options.scopeFile}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
    }
  }
  if (text === undefined) return { ok: false, problem: 'say what to cut: --scope "<which part of the spec>" or --scope-file <file>' };
  if (text.trim() === "") return { ok: false, problem: `the scope${options.scopeFile ? ` (${options.scopeFile})` : ""} is empty: say which part of the spec to cut into packets` };
  return { ok: true, text };
}

/** The workspace a cut (or a draft) judges against: its config loads and nothing but packet files has a problem. */
export async function loadForCut(cwd: string, output: Output): Promise<{ workspace: Workspace; config: Config } | undefined> {
  const load = await loadWorkspace(cwd, { trustCache: false });
  if (!load.ok || !load.workspace.config || load.workspace.problems.some((problem) => !problem.file.startsWith("packets/"))) {
    for (const problem of load.ok ? load.workspace.problems : load.problems) output.err(formatProblem(problem));
    return undefined;
  }
  return { workspace: load.workspace, config: load.workspace.config };
}

/** A spec as packets pin it: its repository path, the last commit at the tip that changed it, and its text there. */
export async function specAtTip(workspace: Workspace, cwd: string, spec: string): Promise<{ ok: true; path: string; commit: string; text: string } | { ok: false; problem: string }> {
  const path = relative(workspace.root, resolve(cwd, spec)).split("\\").join("/");
  if (path.startsWith("..") || isAbsolute(path)) return { ok: false, problem: `${spec} is outside the repository` };
  const last = await gitTry(workspace.root, ["log", "-1", "--format=%H", workspace.tip, "--", path]);
  const commit = last.ok ? last.out.trim() : "";
  const text = commit ? await readFileAt(workspace.root, commit, path) : undefined;
  if (!commit || text === undefined) return { ok: false, problem: `${path} is not in git at the tip of ${workspace.branch}: commit the spec first (packets are pinned to its commit)` };
  return { ok: true, path, commit, text };
}

/** Why proposals' planted tests cannot be run here (they run in the sandbox), or undefined. */
export async function sandboxProblem(root: string, config: Config): Promise<string | undefined> {
  if (config.sandbox.kind !== "bwrap") return undefined;
  const sandbox = await checkSandbox(root);
  return sandbox.ok ? undefined : `the sandbox cannot start: ${sandbox.reason}; ${SANDBOX_HELP}`;
}

/** The committed queue, for judging proposals against it (no repeated id, file or goal). */
export async function existingQueue(workspace: Workspace): Promise<PlaceInput["existing"]> {
  return { ...(await readQueueSources(workspace.root, workspace.tip)), packets: workspace.queue.parsed.map((packet) => ({ id: packet.id, goal: packet.goal, file: packet.file })) };
}

export async function printVerdicts(output: Output, verdicts: readonly Verdict[], runDir: string, none = "The planner proposed no packet."): Promise<void> {
  if (verdicts.length === 0) {
    output.out(none);
    return;
  }
  const rows = verdicts.map((verdict) => [verdict.id ?? "?", verdict.goal ?? verdict.file, verdict.planted, verdict.accepted ? paint(output, "green", "accepted") : paint(output, "red", "refused")]);
  output.out(await renderTable(["ID", "GOAL", "PLANTED TESTS AT THE TIP", "VERDICT"], rows));
  const refused = verdicts.filter((verdict) => !verdict.accepted);
  for (const verdict of refused) {
    output.out(`\n${verdict.id ?? verdict.file} refused:`);
    for (const reason of verdict.reasons) output.out(`  - ${reason.replaceAll("\n", "\n    ")}`);
  }
  const accepted = verdicts.filter((verdict) => verdict.accepted);
  if (accepted.length) {
    output.out(`\nWritten into your checkout, untracked: ${accepted.map((verdict) => verdict.file).join(", ")} (and their planted files under packets/supplied/).`);
    output.out("Nothing is queued until you commit them: read them, then `git add packets/ && git commit`.");
  }
  if (refused.length) output.out(`Refused proposals and their reasons: ${runDir}/refused/`);
}
