import { spawn } from "node:child_process";
import { existsSync, type FSWatcher, readFileSync, statSync, watch } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { diffText } from "../git/diff.js";
import { resolveCommit } from "../git/repo.js";
import { eventPacket, type LedgerEvent } from "../ledger/events.js";
import { emptyState, foldInto, type LedgerState } from "../ledger/fold.js";
import type { LedgerView } from "../ledger/ledger.js";
import { isPgLedger } from "../ledger/open.js";
import { eventLine, type PgLedger } from "../ledger/pg-ledger.js";
import { readWorkers, type WorkerRow } from "../ledger/pg-workers.js";
import { LedgerScanner, SCAN_START, type ScanPosition, STATE_DIR } from "../ledger/scan.js";
import { describeBreak, ledgerPath, scanFile } from "../ledger/store.js";
import type { Output } from "../log/output.js";
import { attemptDir } from "../loop/context.js";
import { BOARD_CSP, boardPage, boardRowsHtml, type LiveRow, liveRows, packetPage, stepAfter, workersHtml } from "../status/board-page.js";
import { announceBoard, openBoardUrl } from "../status/board-url.js";
import { blockedNextStep } from "../status/next-step.js";
import { ProgressFollower } from "../status/progress-follow.js";
import { showPacket } from "../status/show.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadBoard } from "./status.js";
import { loadWorkspace, loadWorkspaceOrReport, type Workspace } from "./workspace.js";

export interface BoardOptions {
  cwd: string;
  /** 0 (the default): a free port. */
  port: number;
  open: boolean;
  output: Output;
  signal: AbortSignal;
}

/**
 * `factory board`: a read-only web page of the queue on 127.0.0.1, updated
 * live as the ledger grows (Server-Sent Events; the ledger is read from where
 * the last read ended, never again from the start), and a page per packet.
 * Runs until interrupted; nothing it serves changes any state.
 */
export async function board(options: BoardOptions): Promise<ExitCode> {
  const { output } = options;
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  const live = new LiveLedger(workspace);
  await live.refresh();
  const clients = new Set<ServerResponse>();
  let rows = boardRowsHtml(await live.rows(), live.alarm(), live.spentUsd);
  let workers = live.workers ? workersHtml(live.workers) : undefined;

  const server = createServer((request, response) => {
    serve(live, clients, () => ({ rows, workers }), request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      response.end(`factory board: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  const listening = await new Promise<AddressInfo | Error>((resolve) => {
    server.once("error", resolve);
    server.listen(options.port, "127.0.0.1", () => resolve(server.address() as AddressInfo));
  });
  if (listening instanceof Error) {
    const taken = (listening as NodeJS.ErrnoException).code === "EADDRINUSE";
    output.err(`factory board: cannot listen on 127.0.0.1:${options.port}: ${taken ? "the port is in use; choose another with --port N, or leave --port out for a free one" : listening.message}`);
    return EXIT.invalid;
  }
  const url = `http://127.0.0.1:${listening.port}/`;
  output.out(`board: ${url}  (read-only, live; Ctrl-C stops it)`);
  // The run's notifications name it while it is open: said once the factory keeps state here (a first run makes it).
  let unannounce = announceBoard(workspace.root, url);
  let announced = openBoardUrl(workspace.root) === url;
  if (options.open) openBrowser(url, output);

  // Each append to the ledger (any process's) is read from where the last read ended and pushed to every page.
  let pending: NodeJS.Timeout | undefined;
  const changed = (): void => {
    pending ??= setTimeout(() => {
      pending = undefined;
      void live
        .refresh()
        .then(() => live.rows())
        .then((fresh) => {
          const html = boardRowsHtml(fresh, live.alarm(), live.spentUsd);
          if (html !== rows) {
            rows = html;
            for (const client of clients) client.write(`data: ${JSON.stringify(html)}\n\n`);
          }
          const seen = live.workers ? workersHtml(live.workers) : undefined;
          if (seen === workers || seen === undefined) return;
          workers = seen;
          for (const client of clients) client.write(`event: workers\ndata: ${JSON.stringify(seen)}\n\n`);
        })
        .catch((error: unknown) => output.err(`warning: the board could not read the ledger: ${error instanceof Error ? error.message : String(error)}`));
    }, 50);
  };
  const watcher = watchState(workspace.root, changed);
  // A watch can miss a rename of the whole file (a repaired ledger): its size is looked at every second too;
  // and the target's tip, so a packet committed while the board is open appears on it.
  let looking = false;
  const sizes = setInterval(() => {
    if (!announced) {
      unannounce = announceBoard(workspace.root, url);
      announced = openBoardUrl(workspace.root) === url;
    }
    if (live.sizeChanged()) changed();
    if (looking) return;
    looking = true;
    void tipMoved(live.workspace)
      .then(async (moved) => {
        if (!moved) return;
        const load = await loadWorkspace(options.cwd);
        if (load.ok) {
          live.workspace = load.workspace;
          changed();
        }
      })
      .catch(() => undefined) // a tip that cannot be read now is read again in a second
      .finally(() => {
        looking = false;
      });
  }, 1_000);

  await new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  clearInterval(sizes);
  if (pending) clearTimeout(pending);
  watcher?.close();
  for (const client of clients) client.end("event: ended\ndata: {}\n\n");
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  unannounce();
  return EXIT.ok;
}

/** Answers one request: the board, its event stream, a packet's page; GET only. */
async function serve(live: LiveLedger, clients: Set<ServerResponse>, now: () => { rows: string; workers: string | undefined }, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { workspace } = live;
  const headers = { "content-security-policy": BOARD_CSP, "cache-control": "no-store", "x-content-type-options": "nosniff" };
  if (request.method !== "GET") {
    response.writeHead(405, { ...headers, allow: "GET", "content-type": "text/plain; charset=utf-8" }).end("the board is read-only\n");
    return;
  }
  const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
  if (path === "/") {
    response.writeHead(200, { ...headers, "content-type": "text/html; charset=utf-8" }).end(
      boardPage({
        branch: workspace.branch,
        root: workspace.root,
        rows: await live.rows(),
        spentUsd: live.spentUsd,
        ...(live.workers ? { workers: live.workers } : {}),
        ...(live.alarm() ? { alarm: live.alarm() } : {}),
        ...(workspace.config?.limits.maxCostUsd !== undefined ? { capUsd: workspace.config.limits.maxCostUsd } : {}),
        ...(await newestRun(workspace)),
      }),
    );
    return;
  }
  if (path === "/events") {
    response.writeHead(200, { ...headers, "content-type": "text/event-stream", connection: "keep-alive" });
    const { rows, workers } = now();
    response.write(`data: ${JSON.stringify(rows)}\n\n`);
    if (workers !== undefined) response.write(`event: workers\ndata: ${JSON.stringify(workers)}\n\n`);
    clients.add(response);
    request.on("close", () => clients.delete(response));
    return;
  }
  const packet = /^\/packet\/([^/]+)$/.exec(path);
  if (packet?.[1]) {
    const html = await packetHtml(workspace, decodeURIComponent(packet[1]));
    response.writeHead(html ? 200 : 404, { ...headers, "content-type": "text/html; charset=utf-8" }).end(html ?? "no such packet\n");
    return;
  }
  response.writeHead(404, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("not found\n");
}

/** The newest run the ledger knows: going since when, or when it ended and how. */
async function newestRun(workspace: Workspace): Promise<{ run?: { startedAt: string; ended?: { at: string; outcome: string } } }> {
  const runs = [...(await workspace.ledger.read()).state.runs.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const last = runs.at(-1);
  if (!last) return {};
  return { run: { startedAt: last.startedAt, ...(last.ended ? { ended: { at: last.ended.at, outcome: last.ended.outcome } } : {}) } };
}

/** A packet's page, from its whole history (read when the page is asked for); undefined when there is no such packet. */
async function packetHtml(workspace: Workspace, id: string): Promise<string | undefined> {
  const { state } = await workspace.ledger.history();
  const record = state.packets.get(id);
  const packet = workspace.queue.packets.find((candidate) => candidate.id === id);
  if (!record && !packet) return undefined;
  const status = record?.status ?? { state: "queued" as const };
  const tail = (attempt: number, gate: string): string | undefined => {
    const log = join(attemptDir(workspace.root, id, attempt), `gate-${gate}.log`);
    return existsSync(log) ? readFileSync(log, "utf8") : undefined;
  };
  const history = showPacket({ id, ...(packet ? { goal: packet.goal } : {}), record, state: status.state, tail });
  let diff: string | undefined;
  if (status.state === "awaiting_human") diff = await diffText(workspace.root, status.fork, status.commit);
  else if (record && record.lastAttempt > 0) {
    const patch = join(attemptDir(workspace.root, id, record.lastAttempt), "diff.patch");
    if (existsSync(patch)) diff = readFileSync(patch, "utf8");
  }
  const next =
    status.state === "awaiting_human"
      ? [`factory diff ${id}`, `factory approve ${id}`, `factory reject ${id} --reason "…"`]
      : status.state === "blocked"
        ? [`factory show ${id}`, blockedNextStep(id, status)]
        : status.state === "queued"
          ? ["factory run"]
          : [];
  return packetPage({ id, goal: packet?.goal ?? "", state: status.state, history, diff, next });
}

/**
 * The ledger as the board follows it: folded from where the last read
 * ended (a scanner position), with the step in flight of each running
 * packet from its last event, or finer, from the newest run's progress log
 * (status/progress-follow.ts). A ledger that shrank (moved aside, repaired)
 * is read again from the start.
 */
export class LiveLedger {
  private position: ScanPosition = SCAN_START;
  private state: LedgerState = emptyState();
  private readonly steps = new Map<string, string>();
  private size = -1;
  private readonly progress: ProgressFollower;

  /** The queue and config as of the target's tip; replaced when the tip moves (`factory board` follows it). */
  constructor(public workspace: Workspace) {
    this.progress = new ProgressFollower(workspace.root);
  }

  /** The read under way: reads take turns, so no two fold the same lines from the same position. */
  private reading: Promise<void> = Promise.resolve();

  refresh(): Promise<void> {
    this.reading = this.reading.then(() => this.readOn());
    return this.reading;
  }

  private async readOn(): Promise<void> {
    this.progress.read();
    const ledger = this.workspace.ledger;
    const events = isPgLedger(ledger) ? await this.databaseEvents(ledger) : await this.fileEvents();
    foldInto(this.state, events);
    for (const event of events) {
      const packet = eventPacket(event);
      if (packet === undefined) continue;
      const step = stepAfter(event);
      if (step) this.steps.set(packet, step);
    }
    if (isPgLedger(ledger)) this.workers = await readWorkers(ledger);
  }

  /** The file's complete lines after the last read (from the start again when the file shrank: moved aside, repaired). */
  private async fileEvents(): Promise<LedgerEvent[]> {
    const path = ledgerPath(this.workspace.root);
    const size = existsSync(path) ? statSync(path).size : 0;
    if (size < this.position.offset) this.restart();
    this.size = size;
    const events: LedgerEvent[] = [];
    const scanner = new LedgerScanner(this.position, (event, complete) => {
      if (complete) events.push(event);
    });
    await scanFile(path, scanner, this.position.offset);
    this.position = scanner.complete;
    return events;
  }

  /** The database's events after the last one read, by event id (from the start again when the ledger has fewer: restored, rewritten). */
  private async databaseEvents(ledger: PgLedger): Promise<LedgerEvent[]> {
    const last = await lastEventId(ledger);
    if (last < this.position.offset) this.restart();
    this.size = last;
    if (last === this.position.offset) return [];
    const { rows } = await ledger.query<{ id: string; line: string }>("SELECT id, line FROM factory_events WHERE id > $1 ORDER BY id", [this.position.offset]);
    const events: LedgerEvent[] = [];
    const scanner = new LedgerScanner(this.position, (event) => events.push(event), eventLine);
    for (const row of rows) scanner.line(row.line, Number(row.id), true);
    this.position = scanner.complete;
    return events;
  }

  private restart(): void {
    this.position = SCAN_START;
    this.state = emptyState();
    this.steps.clear();
  }

  /** Whether the ledger (its size, or the database's last event id) or the progress log moved since the last read; on PostgreSQL the workers' heartbeats too, so always read. */
  sizeChanged(): boolean {
    if (isPgLedger(this.workspace.ledger)) return true;
    const path = ledgerPath(this.workspace.root);
    return (existsSync(path) ? statSync(path).size : 0) !== this.size || this.progress.changed();
  }

  /** Where the ledger's hash chain breaks, as status says it, or undefined while it holds. */
  alarm(): string | undefined {
    return describeBreak(this.position);
  }

  /** The ledger's whole spend as of the last rows read (status's figure: checks and probes besides the packets). */
  spentUsd = 0;

  /** The workers of a PostgreSQL ledger as of the last read; undefined on the file ledger. */
  workers: WorkerRow[] | undefined;

  async rows(): Promise<LiveRow[]> {
    const view: LedgerView = { state: this.state, warnings: [] };
    const { board } = await loadBoard(this.workspace, view);
    this.spentUsd = board.cost_usd;
    const running = new Map<string, { attempt: number; since: string }>();
    for (const record of this.state.packets.values()) if (record.status.state === "running") running.set(record.id, { attempt: record.status.attempt, since: record.status.since });
    // The progress log's step of the attempt in flight is finer; the ledger's stands where the log says nothing of it.
    const steps = new Map(this.steps);
    for (const [id, { attempt }] of running) {
      const finer = this.progress.steps.get(`${id}#${attempt}`);
      if (finer) steps.set(id, finer);
    }
    return liveRows(board, steps, running);
  }
}

async function lastEventId(ledger: PgLedger): Promise<number> {
  const schema = await ledger.query<{ found: string | null }>("SELECT to_regclass('factory_events')::text AS found");
  if (!schema.rows[0]?.found) return 0;
  const { rows } = await ledger.query<{ last: string | null }>("SELECT max(id) AS last FROM factory_events");
  return Number(rows[0]?.last ?? 0);
}

/** Whether the target branch has moved from the tip the workspace's queue was read at. */
async function tipMoved(workspace: Workspace): Promise<boolean> {
  const tip = await resolveCommit(workspace.root, workspace.branch);
  return tip !== undefined && tip !== workspace.tip;
}

/** Watches the state directory (the ledger is appended there, or replaced); undefined where it cannot be watched yet. */
function watchState(root: string, changed: () => void): FSWatcher | undefined {
  try {
    return watch(join(root, STATE_DIR), { persistent: false }, changed);
  } catch {
    return undefined; // no state yet: the size check finds the ledger when it appears
  }
}

function openBrowser(url: string, output: Output): void {
  const child = spawn("xdg-open", [url], { detached: true, stdio: "ignore" });
  child.on("error", () => output.err(`--open: no xdg-open here; open ${url} yourself`));
  child.unref();
}
