import { paint, type Output } from "../log/output.js";
import { orderQueue, type Placement } from "../packet/graph.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspaceOrReport } from "./workspace.js";

export interface PlanOptions {
  cwd: string;
  json: boolean;
  output: Output;
}

export interface PlanStep {
  position: number;
  id: string;
  goal: string;
  gate: "auto" | "human";
  requires: string[];
  state: string;
}

/** The order the queue would run in; nothing is executed. */
export async function plan(options: PlanOptions): Promise<ExitCode> {
  const { output } = options;
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  const ledger = (await workspace.ledger.read()).state;
  const stateOf = (id: string): string => ledger.packets.get(id)?.status.state ?? "queued";
  const byId = new Map(workspace.queue.parsed.map((packet) => [packet.id, packet]));
  const done = new Set([...byId.keys()].filter((id) => stateOf(id) === "merged"));
  const stuck = new Map<string, string>();
  for (const [id, { file, problem }] of workspace.queue.invalid) stuck.set(id, `invalid: ${file}: ${problem}`);
  for (const id of byId.keys()) {
    const record = ledger.packets.get(id);
    if (record?.status.state === "blocked" && !stuck.has(id)) stuck.set(id, `blocked: ${record.status.reason} (factory unblock ${id})`);
  }
  const nodes = [...workspace.queue.parsed, ...[...workspace.queue.invalid.keys()].filter((id) => !byId.has(id)).map((id) => ({ id, requires: [] }))];
  const placements = orderQueue(nodes, { done, stuck });
  const steps: PlanStep[] = [];
  const unreachable: { id: string; reason: string }[] = [];
  for (const placement of placements) {
    if (placement.kind === "unreachable") {
      unreachable.push({ id: placement.id, reason: placement.reason });
      continue;
    }
    const packet = byId.get(placement.id);
    if (!packet) continue;
    steps.push({ position: steps.length + 1, id: packet.id, goal: packet.goal, gate: packet.gate, requires: packet.requires, state: stateOf(packet.id) });
  }
  const exitCode = workspace.problems.length > 0 ? EXIT.invalid : EXIT.ok;
  if (options.json) {
    output.out(JSON.stringify({ branch: workspace.branch, tip: workspace.tip, order: steps, merged: [...done], unreachable, problems: workspace.problems }, null, 2));
    return exitCode;
  }
  for (const warning of workspace.warnings) output.err(`${paint(output, "yellow", "warning")}: ${warning}`);
  output.out(renderPlan(workspace.branch, steps, [...done], unreachable, output));
  if (workspace.problems.length > 0) {
    output.err("");
    for (const problem of workspace.problems) output.err(formatProblem(problem));
  }
  return exitCode;
}

function renderPlan(branch: string, steps: PlanStep[], done: string[], unreachable: Placement[] | { id: string; reason: string }[], output: Output): string {
  const lines: string[] = [];
  lines.push(steps.length === 0 ? `Nothing to run on ${branch}.` : `The queue on ${branch} would run in this order:`);
  for (const step of steps) {
    const marks = [
      step.gate === "human" ? paint(output, "yellow", "[human gate]") : "",
      step.requires.length ? `after ${step.requires.join(", ")}` : "",
      step.state !== "queued" ? `(${step.state})` : "",
    ]
      .filter(Boolean)
      .join("  ");
    lines.push(`  ${String(step.position).padStart(2)}. ${step.id}  ${step.goal}${marks ? `  ${marks}` : ""}`);
  }
  if (done.length > 0) lines.push(`Already merged: ${done.join(", ")}`);
  if (unreachable.length > 0) {
    lines.push("", paint(output, "red", "Cannot run:"));
    for (const entry of unreachable) lines.push(`  ${entry.id}  ${"reason" in entry ? entry.reason : ""}`);
  }
  return lines.join("\n");
}
