import { hostname } from "node:os";
import { HELD_REFS } from "../git/held-refs.js";
import { landedCacheFile, landedPackets } from "../git/trailers.js";
import type { LedgerEvent } from "../ledger/events.js";
import type { LedgerState, PacketHistory, PacketRecord } from "../ledger/fold.js";
import type { LedgerView } from "../ledger/ledger.js";
import { isPgLedger } from "../ledger/open.js";
import { readWorkers, type WorkerRow } from "../ledger/pg-workers.js";
import { isAlive, readRunLock } from "../ledger/run-lock.js";
import { describeBreak } from "../ledger/store.js";
import { type Output, paint, shown } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { FLEET_COST_WINDOW_MS } from "../loop/budget.js";
import { pausedBy } from "../loop/context.js";
import { goneLandings } from "../loop/gone-landings.js";
import { recordHeldVersions } from "../loop/held.js";
import { finishLeftCheckout } from "../merge/checkout.js";
import type { QueueProbe } from "../packet/load.js";
import type { Packet } from "../packet/types.js";
import { attemptsSentence, attemptsText } from "../status/attempts-text.js";
import { type Board, buildBoard, questionLines } from "../status/board.js";
import { type KeptRead, type OwnerCheck, readBoardCache, withRunField, writeBoardCache } from "../status/board-cache.js";
import { flakyText } from "../status/flaky-text.js";
import { type Text, textOf } from "../status/kept-text.js";
import { type SpendView, spendLine, spendView } from "../status/night-spend.js";
import { assessmentLine } from "../status/show.js";
import { describeSpend, spendByRole } from "../status/spend.js";
import { readTargetView, targetViewLine } from "../status/target-view.js";
import type { EarlyReads } from "./early.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { type KeptKey, keptKey, loadProbedOrReport } from "./kept.js";
import { type Workspace, type WorkspaceHead, withQueue } from "./workspace.js";

export interface StatusOptions {
  cwd: string;
  /** The first git reads, when the CLI started them before loading this module. */
  early?: EarlyReads;
  id: string | undefined;
  json: boolean;
  output: Output;
}

/** The board: every packet's state, attempts, cost and reason; with an id, that packet's history. */
export async function status(options: StatusOptions): Promise<ExitCode> {
  const { output } = options;
  const probed = await loadProbedOrReport(
    options.cwd,
    output,
    async (head) => {
      // A checkout a killed run left half-way is brought forward first, so the board and the checkout agree.
      const finished = await finishLeftCheckout(head.root, head.branch);
      if (finished) output.err(`notice: ${finished}`);
      // Held work git keeps while the ledger lost it (deleted, moved aside) is recorded again before the board is built.
      const restored = await recordHeldVersions(head.root, head.ledger, {
        packets: async () => (await withQueue(head)).queue.packets,
        state: async () => (await head.ledger.read()).state,
      });
      for (const id of restored) output.err(`notice: ${id}'s held attempt, kept in git (${HELD_REFS}${id}), is recorded again: it awaits a person (factory approve ${id})`);
      return finished !== undefined || restored.length > 0;
    },
    options.early,
  );
  if (!probed) return EXIT.invalid;
  const { head, probe } = probed;
  if (options.id !== undefined) {
    // One packet's page shows its events: only then is the whole ledger read.
    const workspace = await withQueue(head, undefined, probe);
    const history = await workspace.ledger.history();
    const { board } = await loadBoard(workspace, history);
    return showPacket(options, board, history.state.packets.get(options.id));
  }
  const key = await keptKey(probed);
  const lock = await readRunLock(head.root);
  const run = lock ? { ...lock, alive: isAlive(lock.pid) } : null;
  const workers = isPgLedger(head.ledger) ? await readWorkers(head.ledger) : undefined;
  const { state } = await head.ledger.read();
  const view = await readTargetView(head.root, { remote: head.config?.target.remote, branch: head.branch }, state);
  if (options.json) {
    const waiting = waitingRuns(state).map((entry) => ({ pid: entry.pid, host: entry.host, ...entry.remoteDown }));
    const flaky = Object.values(state.flaky);
    await output.outPieces(
      withRunField((await boardJson(head, probe, key)).text, run, {
        ...(workers ? { workers } : {}),
        ...(waiting.length ? { remote_waits: waiting } : {}),
        ...(flaky.length ? { flaky } : {}),
        ...(state.paused ? { paused: state.paused } : {}),
        spend: await nightSpend(head, probe, key, state),
        ...(view ? { target_view: view } : {}),
      }),
    );
    return EXIT.ok;
  }
  const table = await boardTable(head, probe, key, output);
  for (const warning of table.warnings) output.err(`${paint(output, "yellow", "warning")}: ${warning}`);
  await output.outPieces(table.text.pieces());
  if (run) {
    output.out(
      run.alive
        ? `A run is in progress: pid ${run.pid} on ${run.host}, started ${run.startedAt}.`
        : `A run lock from pid ${run.pid} (no longer running) is left; the next \`factory run\` takes it over.`,
    );
  }
  if (view) {
    const line = targetViewLine(view, Date.now());
    output.out(line.warn ? paint(output, "yellow", line.text) : line.text);
  }
  for (const waiting of remoteWaits(state)) output.out(paint(output, "yellow", waiting));
  if (state.paused)
    output.out(paint(output, "yellow", `${pausedBy(state.paused)}: no worker claims a packet${state.paused.interrupt ? " (running attempts were stopped)" : ""}; factory resume lifts it.`));
  const spend = await nightSpend(head, probe, key, state);
  if (spend.spent_usd > 0 || spend.reserved_usd > 0 || spend.queued > 0) output.out(spendLine(spend));
  for (const known of Object.values(state.flaky)) output.out(paint(output, "yellow", flakyText({ ...known })));
  for (const record of state.packets.values()) {
    if (record.status.state === "awaiting_answer")
      output.out(paint(output, "yellow", questionLines(record.id, { text: record.status.question, suggestions: record.status.suggestions ?? [] }).join("\n")));
  }
  if (workers && isPgLedger(head.ledger)) output.out(await renderWorkers(workers, head.ledger.where, output));
  if (table.problems > 0) output.out(`${table.problems} packet/config problem(s): run \`factory lint\` to see them.`);
  return EXIT.ok;
}

/** The runs still going that cannot reach their shared remote. */
function waitingRuns(state: Pick<LedgerState, "runs">) {
  return [...state.runs.values()].filter((run) => run.remoteDown && !run.ended);
}

/** Pure: a line for each run still going that cannot reach its shared remote: which remote, since when, why. */
export function remoteWaits(state: Pick<LedgerState, "runs">): string[] {
  return waitingRuns(state).map(
    (run) =>
      `The run of pid ${run.pid} on ${run.host} cannot reach ${run.remoteDown?.remote} since ${run.remoteDown?.since} (${run.remoteDown?.reason}); its landing waits, nothing is spent meanwhile.`,
  );
}

/** The workers of a PostgreSQL ledger: a worker past its lease is stale, never shown as alive. */
async function renderWorkers(workers: readonly WorkerRow[], where: string, output: Output): Promise<string> {
  if (workers.length === 0) return `\nNo worker has run on ${where} yet: \`factory run --worker NAME\` on each machine.`;
  const rows = workers.map((worker) => [
    worker.name,
    paint(output, worker.state === "alive" ? "green" : worker.state === "stale" ? "red" : "dim", worker.state),
    `${worker.host} pid ${worker.pid}`,
    worker.holds.map((hold) => `${hold.packet}#${hold.attempt} (fence ${hold.fence})`).join(", ") || "-",
    worker.last_heartbeat,
  ]);
  const stale = workers.filter((worker) => worker.state === "stale").map((worker) => worker.name);
  return [
    "",
    `Workers on ${where}:`,
    await renderTable(["WORKER", "STATE", "WHERE", "HOLDS", "LAST HEARTBEAT"], rows),
    ...(stale.length ? [`Stale (past its lease, never renewed): ${stale.join(", ")}; what it holds is taken over by the next worker that looks.`] : []),
  ].join("\n");
}

/**
 * The board as `status --json` prints it (without the run), as UTF-8: the
 * one kept under `key` when nothing it was built from has changed, else
 * built from the queue and the ledger and kept for the next `status`.
 * `keyed`: the text is the board of `key` (not one built from a ledger that
 * moved meanwhile).
 */
async function boardJson(head: WorkspaceHead, probe: QueueProbe, key: KeptKey | undefined): Promise<KeptRead & { keyed: boolean }> {
  const kept = key ? readBoardCache(head.root, "json", key.key, ownerAlive) : undefined;
  if (kept) return { ...kept, keyed: true };
  const workspace = await withQueue(head, undefined, probe);
  const { board, owners, version } = await loadBoard(workspace);
  const text = Buffer.from(JSON.stringify(board, null, 2));
  // Kept only when the ledger read is the version the key names (no append in between).
  const keyed = key !== undefined && version === key.ledger;
  const note: JsonNote = { queued: queuedTiers(board) };
  if (key && keyed) writeBoardCache(head.root, "json", key.key, { text, owners, note });
  return { text: textOf(text), owners, note, keyed };
}

/** Kept beside the board's JSON: the queued packets' tiers, counted, all the spend forecast reads of it (parsing a 10,000-packet board cost ~25 ms). */
interface JsonNote {
  queued: [tier: string, reviewer: string, count: number][];
}

/** Pure: the queued packets' tiers and reviewers, counted. */
function queuedTiers(board: Board): JsonNote["queued"] {
  const counts = new Map<string, [string, string, number]>();
  for (const row of board.packets) {
    if (row.state !== "queued") continue;
    const tiers: [string, string] = [row.tier ?? "", row.reviewer ?? ""];
    const key = JSON.stringify(tiers);
    const seen = counts.get(key);
    if (seen) seen[2]++;
    else counts.set(key, [...tiers, 1]);
  }
  return [...counts.values()];
}

/** Spent (over the cap's window on a shared ledger), reserved, and the queued packets' forecast: time-dependent, so never kept with the board. */
async function nightSpend(head: WorkspaceHead, probe: QueueProbe, key: KeptKey | undefined, state: LedgerState): Promise<SpendView> {
  const json = await boardJson(head, probe, key);
  const note = json.note as Partial<JsonNote> | undefined;
  const counted = Array.isArray(note?.queued) ? note.queued : queuedTiers(JSON.parse(json.text.bytes().toString("utf8")) as Board);
  json.text.close();
  const queued = counted.flatMap(([tier, reviewer, count]) => Array.from({ length: count }, () => ({ tier, reviewer })));
  const limits = head.config?.limits;
  return spendView({
    state,
    queued,
    tiers: head.config?.tiers ?? [],
    capUsd: limits?.maxCostUsd,
    windowMs: limits?.maxCostWindowMs ?? (isPgLedger(head.ledger) ? FLEET_COST_WINDOW_MS : undefined),
    now: Date.now(),
  });
}

interface TableView {
  text: Text;
  warnings: string[];
  problems: number;
}

/** The board as the table a person reads, kept like the JSON (once without colour, once with). */
async function boardTable(head: WorkspaceHead, probe: QueueProbe, key: KeptKey | undefined, output: Output): Promise<TableView> {
  const view = output.color ? "colorTable" : "table";
  const kept = key ? readBoardCache(head.root, view, key.key, ownerAlive) : undefined;
  const note = kept?.note as Omit<TableView, "text"> | undefined;
  if (kept && Array.isArray(note?.warnings) && typeof note.problems === "number") return { text: kept.text, warnings: note.warnings, problems: note.problems };
  kept?.text.close();
  const json = await boardJson(head, probe, key);
  const board = JSON.parse(json.text.bytes().toString("utf8")) as Board;
  // Kept as the terminal gets it: the colours the factory painted, every text of an agent's inert.
  const text = Buffer.from(shown(await renderBoard(board, output), output.color));
  const table: TableView = { text: textOf(text), warnings: board.warnings, problems: board.problems.length };
  if (key && json.keyed) writeBoardCache(head.root, view, key.key, { text, owners: json.owners, note: { warnings: table.warnings, problems: table.problems } });
  return table;
}

function ownerAlive(owner: { pid: number; host: string }): boolean {
  return owner.host !== hostname() || isAlive(owner.pid);
}

/** The board of a workspace: its committed queue, the ledger's fold and what git's trailers say landed. */
export async function loadBoard<R extends PacketRecord = PacketRecord>(
  workspace: Workspace,
  view?: LedgerView<R>,
): Promise<{ ledger: LedgerState<R>; board: Board; warnings: string[]; owners: OwnerCheck[]; version: string | undefined }> {
  // git's log runs while the ledger is read.
  const landing = landedPackets(workspace.root, workspace.tip, { cacheFile: landedCacheFile(workspace.root) });
  landing.catch(() => undefined); // awaited below; a failure is not left unhandled meanwhile
  const ledgerRead = view ?? ((await workspace.ledger.read()) as unknown as LedgerView<R>);
  const ledger = ledgerRead.state;
  const broken = describeBreak(ledgerRead);
  const warnings = [...(broken ? [broken] : []), ...workspace.warnings, ...ledgerRead.warnings];
  const owners: OwnerCheck[] = [];
  const board = buildBoard({
    branch: workspace.branch,
    tip: workspace.tip,
    packets: workspace.queue.packets,
    invalid: workspace.queue.invalid,
    ledger,
    problems: workspace.problems,
    warnings,
    landed: await landing,
    ownerAlive: (owner) => {
      const alive = ownerAlive(owner);
      owners.push({ pid: owner.pid, host: owner.host, alive });
      return alive;
    },
  });
  // A landing the target no longer carries (undone by a later commit, or removed by a rewrite) is said wherever the board is read.
  for (const gone of await goneLandings(workspace.root, workspace.tip, workspace.branch, ledger as unknown as LedgerState)) {
    board.warnings.push(gone.text);
    const row = board.packets.find((candidate) => candidate.id === gone.packet && candidate.commit === gone.commit);
    if (row)
      row.note = `its landing ${gone.commit.slice(0, 10)} is no longer on ${workspace.branch}: factory reset ${gone.packet} lands it again, factory acknowledge ${gone.packet} accepts it is gone`;
  }
  return { ledger, board, warnings: board.warnings, owners, version: ledgerRead.version };
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
    attemptsText(row.attempts_used, row.max_attempts, row.last_attempt),
    `$${row.cost_usd.toFixed(2)}`,
    row.gate ?? "-",
    truncate([row.reason ?? row.goal ?? "", row.note ?? ""].filter(Boolean).join(" — "), 100),
  ]);
  const counts = Object.entries(board.counts)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${count} ${state}`);
  const seen = (board.seen ?? []).map(
    (entry) =>
      `While ${entry.packet}#${entry.attempt} ran, your repository changed (yours, not the packet's; the run carried on): ${entry.changes.slice(0, 3).join(", ")}${entry.changes.length > 3 ? ` and ${entry.changes.length - 3} more` : ""}; see \`factory show ${entry.packet}\``,
  );
  return [
    await renderTable(["ID", "STATE", "ATTEMPTS", "COST", "GATE", "REASON / GOAL"], rows),
    "",
    `${board.branch} @ ${board.tip.slice(0, 10)}: ${counts.join(", ")}; spent $${board.cost_usd.toFixed(2)}`,
    ...seen,
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
  output.out(`attempts: ${attemptsSentence(row.attempts_used, row.max_attempts, row.last_attempt)}  cost: $${row.cost_usd.toFixed(2)}`);
  if (row.reason) output.out(`reason: ${row.reason}`);
  if (row.note) output.out(`note: ${row.note}`);
  if (record?.assessment) output.out(`assessment: ${assessmentLine(record.assessment, row.sha256)}`);
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
    case "awaiting_answer":
    case "in_review":
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
