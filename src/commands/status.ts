import { finishLeftCheckout } from "../merge/checkout.js";
import { hostname } from "node:os";
import { landedPackets } from "../git/trailers.js";
import type { LedgerState, PacketHistory, PacketRecord } from "../ledger/fold.js";
import type { LedgerView } from "../ledger/ledger.js";
import type { LedgerEvent } from "../ledger/events.js";
import { describeSpend, spendByRole } from "../status/spend.js";
import { describeBreak } from "../ledger/store.js";
import { readRunLock, isAlive } from "../ledger/run-lock.js";
import { paint, type Output } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { buildBoard, type Board } from "../status/board.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import type { Packet } from "../packet/types.js";
import { loadWorkspaceOrReport, type Workspace } from "./workspace.js";

export interface StatusOptions {
  cwd: string;
  id: string | undefined;
  json: boolean;
  output: Output;
}

/** The board: every packet's state, attempts, cost and reason; with an id, that packet's history. */
export async function status(options: StatusOptions): Promise<ExitCode> {
  const { output } = options;
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  // A checkout a killed run left half-way is brought forward first, so the board and the checkout agree.
  const finished = await finishLeftCheckout(workspace.root, workspace.branch);
  if (finished) output.err(`notice: ${finished}`);
  // One packet's page shows its events: only then is the whole ledger read.
  const history = options.id !== undefined ? await workspace.ledger.history() : undefined;
  const { board, warnings } = await loadBoard(workspace, history);
  const lock = await readRunLock(workspace.root);
  const run = lock ? { ...lock, alive: isAlive(lock.pid) } : null;

  if (options.id !== undefined) return showPacket(options, board, history?.state.packets.get(options.id));
  if (options.json) {
    output.out(JSON.stringify({ ...board, run }, null, 2));
    return EXIT.ok;
  }
  for (const warning of warnings) output.err(`${paint(output, "yellow", "warning")}: ${warning}`);
  output.out(await renderBoard(board, output));
  if (run) {
    output.out(
      run.alive
        ? `A run is in progress: pid ${run.pid} on ${run.host}, started ${run.startedAt}.`
        : `A run lock from pid ${run.pid} (no longer running) is left; the next \`factory run\` takes it over.`,
    );
  }
  if (board.problems.length > 0) output.out(`${board.problems.length} packet/config problem(s): run \`factory lint\` to see them.`);
  return EXIT.ok;
}

/** The board of a workspace: its committed queue, the ledger's fold and what git's trailers say landed. */
export async function loadBoard<R extends PacketRecord = PacketRecord>(workspace: Workspace, view?: LedgerView<R>): Promise<{ ledger: LedgerState<R>; board: Board; warnings: string[] }> {
  // git's log runs while the ledger is read.
  const landing = landedPackets(workspace.root, workspace.tip);
  landing.catch(() => undefined); // awaited below; a failure is not left unhandled meanwhile
  const ledgerRead = view ?? ((await workspace.ledger.read()) as unknown as LedgerView<R>);
  const ledger = ledgerRead.state;
  const broken = describeBreak(ledgerRead);
  const warnings = [...(broken ? [broken] : []), ...workspace.warnings, ...ledgerRead.warnings];
  const board = buildBoard({
    branch: workspace.branch,
    tip: workspace.tip,
    packets: workspace.queue.packets,
    invalid: workspace.queue.invalid,
    ledger,
    problems: workspace.problems,
    warnings,
    landed: await landing,
    ownerAlive: (owner) => owner.host !== hostname() || isAlive(owner.pid),
  });
  return { ledger, board, warnings };
}

/** The queue's packets not merged (per the ledger and git's trailers), in queue order: what a run still has to do. */
export async function openPackets(workspace: Workspace): Promise<Packet[]> {
  const { board } = await loadBoard(workspace);
  const open = new Set(board.packets.filter((row) => row.state !== "merged").map((row) => row.id));
  return workspace.queue.packets.filter((packet) => open.has(packet.id));
}

async function renderBoard(board: Board, output: Output): Promise<string> {
  if (board.packets.length === 0) return `No packets on ${board.branch}: add packets/<ID>-<slug>.toml and commit them.`;
  const rows = board.packets.map((row) => [
    row.id,
    paint(output, stateColor(row.state), row.state),
    row.max_attempts === null ? String(row.attempts_used) : `${row.attempts_used}/${row.max_attempts}`,
    `$${row.cost_usd.toFixed(2)}`,
    row.gate ?? "-",
    truncate([row.reason ?? row.goal ?? "", row.note ?? ""].filter(Boolean).join(" — "), 100),
  ]);
  const counts = Object.entries(board.counts)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${count} ${state}`);
  return [
    await renderTable(["ID", "STATE", "ATTEMPTS", "COST", "GATE", "REASON / GOAL"], rows),
    "",
    `${board.branch} @ ${board.tip.slice(0, 10)}: ${counts.join(", ")}; spent $${board.cost_usd.toFixed(2)}`,
  ].join("\n");
}

function showPacket(options: StatusOptions, board: Board, record: PacketHistory | undefined): ExitCode {
  const { output } = options;
  const row = board.packets.find((candidate) => candidate.id === options.id);
  if (!row) {
    output.err(`no packet "${options.id}" on ${board.branch} or in the ledger; \`factory status\` lists them`);
    return EXIT.invalid;
  }
  const events = record?.events ?? [];
  if (options.json) {
    output.out(JSON.stringify({ schema: board.schema, packet: row, events }, null, 2));
    return EXIT.ok;
  }
  output.out(`${row.id}  ${row.state}  ${row.goal ?? ""}`.trimEnd());
  if (row.file) output.out(`file: ${row.file}${row.sha256 ? ` (sha256 ${row.sha256.slice(0, 12)})` : ""}`);
  output.out(`attempts: ${row.attempts_used}${row.max_attempts === null ? "" : `/${row.max_attempts}`}  cost: $${row.cost_usd.toFixed(2)}`);
  if (row.reason) output.out(`reason: ${row.reason}`);
  if (row.note) output.out(`note: ${row.note}`);
  if (record?.fingerprints.length) output.out(`failure fingerprints: ${record.fingerprints.join(", ")}`);
  const spends = spendByRole(record?.events ?? []);
  if (spends.length) output.out(`spend: ${describeSpend(spends)}`);
  output.out("");
  if (events.length === 0) {
    output.out("No events yet: the packet has not run.");
    return EXIT.ok;
  }
  for (const event of events) output.out(`${event.ts}  ${describeEvent(event)}`);
  return EXIT.ok;
}

/** One line per event for `status ID`: the kind and the fields a person needs. */
export function describeEvent(event: LedgerEvent): string {
  const { v: _v, ts: _ts, kind, ...rest } = event;
  const fields = Object.entries(rest)
    .filter(([key]) => key !== "packet")
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return `${kind}${fields.length ? `  ${fields.join(" ")}` : ""}`;
}

function stateColor(state: string): "green" | "red" | "yellow" | "blue" | "dim" {
  switch (state) {
    case "merged":
      return "green";
    case "blocked":
    case "invalid":
      return "red";
    case "awaiting_human":
      return "yellow";
    case "running":
      return "blue";
    default:
      return "dim";
  }
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
