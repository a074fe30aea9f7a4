import type { LedgerState } from "../ledger/fold.js";
import { shown as asShown, type Output, paint } from "../log/output.js";
import { orderQueue, type Placement } from "../packet/graph.js";
import { readBoardCache, writeBoardCache } from "../status/board-cache.js";
import { type Text, textOf } from "../status/kept-text.js";
import { formatProblem } from "../util/problem.js";
import type { EarlyReads } from "./early.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { keptKey, loadProbedOrReport, type Probed } from "./kept.js";
import { type Workspace, withQueue } from "./workspace.js";

export interface PlanOptions {
  cwd: string;
  /** The first git reads, when the CLI started them before loading this module. */
  early?: EarlyReads;
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
  const probed = await loadProbedOrReport(options.cwd, output, undefined, options.early);
  if (!probed) return EXIT.invalid;
  const shown = await shownPlan(probed, options.json, output);
  for (const warning of shown.warnings) output.err(`${paint(output, "yellow", "warning")}: ${warning}`);
  await output.outPieces(shown.text.pieces());
  if (shown.problems.length > 0) {
    output.err("");
    for (const problem of shown.problems) output.err(problem);
  }
  return shown.invalid ? EXIT.invalid : EXIT.ok;
}

/** What `plan` prints: the order (JSON or text), the warnings and problems beside it (text only), and whether there are problems (exit 2). */
interface ShownPlan {
  text: Text;
  warnings: string[];
  problems: string[];
  invalid: boolean;
}

/**
 * The plan as printed last time when nothing it was built from has changed
 * (kept like the board, see board-cache.ts), else built from the queue and
 * the ledger and kept for the next `plan`.
 */
async function shownPlan(probed: Probed, json: boolean, output: Output): Promise<ShownPlan> {
  const view = json ? "planJson" : output.color ? "planColorText" : "planText";
  const key = await keptKey(probed);
  const kept = key ? readBoardCache(probed.head.root, view, key.key, () => true) : undefined;
  const note = kept?.note as Partial<Omit<ShownPlan, "text">> | undefined;
  if (kept && Array.isArray(note?.warnings) && Array.isArray(note.problems) && typeof note.invalid === "boolean") {
    return { text: kept.text, warnings: note.warnings, problems: note.problems, invalid: note.invalid };
  }
  kept?.text.close();
  const workspace = await withQueue(probed.head, undefined, probed.probe);
  const read = await workspace.ledger.read();
  const { steps, done, unreachable } = orderOf(workspace, read.state);
  const invalid = workspace.problems.length > 0;
  const text = Buffer.from(
    json
      ? JSON.stringify({ branch: workspace.branch, tip: workspace.tip, order: steps, merged: done, unreachable, problems: workspace.problems }, null, 2)
      : asShown(renderPlan(workspace.branch, steps, done, unreachable, output), output.color),
  );
  const shown: ShownPlan = json
    ? { text: textOf(text), warnings: [], problems: [], invalid }
    : { text: textOf(text), warnings: workspace.warnings, problems: workspace.problems.map(formatProblem), invalid };
  // Kept only when the ledger read is the version the key names (no append in between).
  if (key && read.version === key.ledger) {
    writeBoardCache(workspace.root, view, key.key, { text, owners: [], note: { warnings: shown.warnings, problems: shown.problems, invalid } });
  }
  return shown;
}

/** Pure: the order of the queue's packets given the ledger, what merged, and what cannot run and why. */
function orderOf(workspace: Workspace, ledger: LedgerState): { steps: PlanStep[]; done: string[]; unreachable: { id: string; reason: string }[] } {
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
  return { steps, done: [...done], unreachable };
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
