import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { HELD_REFS } from "../git/held-refs.js";
import { projectOf } from "../git/project.js";
import type { LedgerState, RunRecord } from "../ledger/fold.js";
import type { Ledger } from "../ledger/ledger.js";
import { isPgLedger } from "../ledger/open.js";
import { startWorkerClaims, type WorkerClaims } from "../ledger/pg-claims.js";
import { PgLandings } from "../ledger/pg-landings.js";
import type { PgLedger } from "../ledger/pg-ledger.js";
import { maskUrl } from "../ledger/pg-url.js";
import { OtherProjectError } from "../ledger/project.js";
import { acquireRunLock } from "../ledger/run-lock.js";
import { STATE_DIR } from "../ledger/scan.js";
import { describeBreak, withLandLock } from "../ledger/store.js";
import { joined, type Output } from "../log/output.js";
import { createProgress } from "../log/progress.js";
import { Budget, FLEET_COST_WINDOW_MS } from "../loop/budget.js";
import { factoryHomeWarning, Interrupted, RUNS_DIR, type RunContext } from "../loop/context.js";
import { removeGarbage } from "../loop/gc.js";
import { goneLandings } from "../loop/gone-landings.js";
import { recordHeldVersions } from "../loop/held.js";
import { sweepLeftovers } from "../loop/leftovers.js";
import { checkLandedMutants } from "../loop/mutation-check.js";
import { newlyLanded } from "../loop/mutation-verdict.js";
import { Notifier, type RunCounts } from "../loop/notify.js";
import { type Preflight, preflight } from "../loop/preflight-checks.js";
import { AgentWaits } from "../loop/rate-limits.js";
import { recordLandedVersions } from "../loop/reconcile.js";
import { recoverInFlight } from "../loop/recover.js";
import { repairsFirst, waitForRepairs } from "../loop/repairs.js";
import { drainQueue, heldBehind } from "../loop/scheduler.js";
import { finishLeftCheckout } from "../merge/checkout.js";
import { syncWithRemote } from "../merge/target-sync.js";
import { inputProblems, remoteProblems } from "../packet/input-lint.js";
import { assessmentRefusals } from "../planning/policy.js";
import { tracer } from "../process/trace.js";
import { questionLines } from "../status/board.js";
import { blockedNextStep } from "../status/next-step.js";
import { formatProblem } from "../util/problem.js";
import { shownPath } from "../util/shown-path.js";
import { unwritableDir } from "../util/writable-dir.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { garbageOf } from "./gc.js";
import { writeRunBrief } from "./report.js";
import { openPackets } from "./status.js";
import { loadHead, loadWorkspace, type Workspace } from "./workspace.js";

export interface RunOptions {
  cwd: string;
  once: boolean;
  packet: string | undefined;
  maxCost: number | undefined;
  concurrency: number | undefined;
  /** `--keep-going`: like `[limits] on_block = "continue"`. */
  keepGoing?: boolean;
  /** `--json`: the progress events on stdout, one JSON object per line. */
  json?: boolean;
  /** `--worker NAME`: this worker's name on a PostgreSQL ledger (default: the host name and a short id). */
  worker?: string;
  output: Output;
  signal: AbortSignal;
}

/** `factory run`: drain the queue. Exit 0 drained, 1 halted, 2 invalid input, 130 interrupted. */
export async function run(options: RunOptions): Promise<ExitCode> {
  const began = Date.now();
  // With --json, stdout carries only the event stream (one JSON object per line); every other line goes to stderr.
  const output: Output = options.json
    ? { ...options.output, out: (text) => options.output.err(text), outPieces: async (pieces) => options.output.err(joined(pieces).toString("utf8")) }
    : options.output;
  const ready = await readyToRun(options, output);
  if (typeof ready === "number") return ready;
  const checked = await preflightRun(ready, options, output);
  if (typeof checked === "number") return checked;
  const fleet = await joinFleet(ready, options, output);
  if (typeof fleet === "number") return fleet;
  const { workspace, config } = ready;
  const { lock, claims } = fleet;
  await sweepLeftovers(workspace.root); // what a killed run or doctor left: its sandbox directories, its scratch worktrees
  const progress = createProgress(options.output, join(workspace.root, RUNS_DIR, `run-${lock.lock.startedAt.replaceAll(":", "-")}.log`), { json: Boolean(options.json) });
  const started = Date.now();
  // On a shared ledger the cap is the fleet's, over a window (a night by default): a restarted worker does not start again at $0.
  const budget = new Budget(options.maxCost ?? config.limits.maxCostUsd, config.limits.maxCostWindowMs ?? (fleet.shared ? FLEET_COST_WINDOW_MS : undefined));
  for (const spend of checked.spends) budget.add(spend.costUsd ?? spend.estimatedUsd);
  try {
    // The run before this one, killed (the file ledger's run lock is this run's now): its landings' mutation check and its brief are this run's to do.
    const killed = fleet.shared ? undefined : await killedRunBefore(workspace.ledger);
    const unmeasured = killed ? await unmeasuredLandings(workspace.ledger, killed.startedAt) : [];
    const gone = await recoverAndRecord(ready, fleet, checked, budget, options, progress.emit);
    const notifier = new Notifier(workspace.root, config.notify);
    const ctx: RunContext = {
      root: workspace.root,
      ledger: workspace.ledger,
      config,
      branch: workspace.branch,
      owner: fleet.owner,
      emit: progress.emit,
      signal: options.signal,
      adapters: checked.adapters,
      budget,
      waits: new AgentWaits(),
      notifier,
      ...(claims ? { claims } : {}),
      ...(fleet.landings ? { landings: fleet.landings } : {}),
      ...(workspace.tip ? { configFrom: workspace.tip } : {}),
    };
    const mergedBefore = await mergedAt(workspace.ledger);
    // The ledger is the fleet's: the mutation check measures only this run's own landings, each once across the fleet.
    const ownLandings = new Map<string, string>();
    const end = await drainQueue(ctx, {
      packets: waitForRepairs(ready.packets, checked.repairing),
      once: options.once,
      only: options.packet,
      concurrency: options.concurrency ?? config.limits.concurrency,
      keepGoing: options.keepGoing === true || config.limits.onBlock === "continue",
      gone,
      landed: (id, commit) => ownLandings.set(id, commit),
    });
    const mergedNow = await mergedAt(workspace.ledger);
    const landed = [
      ...unmeasured.filter(({ id, commit }) => mergedNow.get(id) === commit && !ownLandings.has(id)),
      ...newlyLanded(mergedBefore, mergedNow).filter(({ id, commit }) => ownLandings.get(id) === commit),
    ];
    if (end.outcome !== "interrupted") await checkLandedMutants(ctx, { packets: ready.packets, landed, runMs: Date.now() - began });
    await workspace.ledger.append([{ kind: "run-ended", run: fleet.owner.run, outcome: end.outcome, ...(end.reason ? { reason: end.reason } : {}) }]);
    progress.emit({ kind: "run-end", outcome: end.outcome, ...(end.reason ? { reason: end.reason } : {}), costUsd: budget.spentUsd, elapsedMs: Date.now() - started });
    await afterTheRun(ready, fleet.owner.run, { end, budget, notifier, mergedBefore, ...(killed ? { since: killed.startedAt } : {}) }, output);
    return end.outcome === "drained" ? EXIT.ok : end.outcome === "interrupted" ? EXIT.interrupted : EXIT.halted;
  } finally {
    progress.close();
    await claims?.stop();
    await lock.release();
  }
}

/** What `run` has once its input is accepted: the workspace, its config and queue, the ledger as verified, the open packets. */
interface Ready {
  workspace: Workspace;
  config: NonNullable<Workspace["config"]>;
  packets: Workspace["queue"]["packets"];
  verified: Awaited<ReturnType<Ledger["verify"]>>;
  open: Awaited<ReturnType<typeof openPackets>>;
}

/**
 * Everything refused before anything is claimed or spent: a remote that cannot be followed, the workspace's
 * problems, what lint refuses, an unknown packet, a broken ledger, an unwritable state directory, a packet
 * that needs an assessment. The exit code when refused.
 */
async function readyToRun(options: RunOptions, output: Output): Promise<Ready | ExitCode> {
  // With [target] remote, the queue, the spec and the config are the remote's: fetched, and this clone's branch brought to them first.
  const first = await loadHead(options.cwd);
  const remote = first.ok ? first.head.config?.target.remote : undefined;
  // A remote the repository does not have is lint's problem, said as lint says it (never as a failed fetch).
  const unknown = first.ok && first.head.config ? await remoteProblems(first.head.root, first.head.config) : [];
  if (unknown.length > 0) {
    for (const problem of unknown) output.err(formatProblem(problem));
    output.err("factory run: nothing was run; fix the problems above (`factory lint` lists them).");
    return EXIT.invalid;
  }
  if (first.ok && remote) {
    const synced = await syncWithRemote(first.head.root, remote, first.head.branch);
    if (!synced.ok) {
      output.err(`factory run: ${synced.reason.replace(/\.+$/, "")}. Nothing was claimed or spent.`);
      return EXIT.halted;
    }
  }
  const load = await loadWorkspace(options.cwd, { trustCache: false }); // a run decides: it reads the queue itself
  if (!load.ok || load.workspace.problems.length > 0 || !load.workspace.config) {
    const problems = load.ok ? load.workspace.problems : load.problems;
    for (const problem of problems) output.err(formatProblem(problem));
    output.err("factory run: nothing was run; fix the problems above (`factory lint` lists them).");
    return EXIT.invalid;
  }
  const { workspace } = load;
  const config = workspace.config as NonNullable<typeof workspace.config>;
  // What lint refuses beyond the files' own keys (a binary planted test, a 30 MB planted file, hidden tests
  // where an agent can read them) the run refuses too, before it spends (issue 57 §5).
  const input = await inputProblems({ root: workspace.root, tip: workspace.tip, config, packets: workspace.queue.packets });
  if (input.length > 0) {
    for (const problem of input) output.err(formatProblem(problem));
    output.err("factory run: nothing was run; fix the problems above (`factory lint` lists them).");
    return EXIT.invalid;
  }
  for (const warning of [...workspace.warnings, ...[factoryHomeWarning()].filter((place) => place !== undefined)]) output.err(`warning: ${warning}`);
  const packets = workspace.queue.packets;
  if (options.packet !== undefined && !packets.some((packet) => packet.id === options.packet)) {
    output.err(`factory run: no packet "${options.packet}" on ${workspace.branch}`);
    return EXIT.invalid;
  }

  // The whole file, not a snapshot: the run decides on it, and a snapshot has no hash chain of its own.
  const verified = await workspace.ledger.verify();
  const broken = describeBreak(verified);
  if (broken) {
    output.err(`factory run refused: ${broken}.`);
    return EXIT.halted;
  }

  // Everything the run writes goes under .factory/state: a directory it cannot write is said now, before anything is claimed.
  const unwritable = unwritableDir(join(workspace.root, STATE_DIR));
  if (unwritable) {
    output.err(`factory run refused: ${unwritable}. Nothing was claimed or spent.`);
    return EXIT.invalid;
  }

  // [planning] require_assessment: refused before the preflight, whose model probes already cost money.
  const open = await openPackets(workspace);
  const unassessed = assessmentRefusals({
    packets: options.packet === undefined ? open : open.filter((packet) => packet.id === options.packet),
    tiers: config.tiers.map((tier) => tier.name),
    policy: config.planning.requireAssessment,
    ruling: (id) => verified.state.packets.get(id)?.assessment,
  });
  if (unassessed.length > 0) {
    for (const { problem } of unassessed) output.err(`factory run refused: ${problem}`);
    output.err("Nothing was claimed or spent.");
    return EXIT.invalid;
  }
  return { workspace, config, packets, verified, open };
}

/** The preflight (`doctor`'s checks, the tip's baseline, the model probes), after finishing a landing a killed run left; its refusals said. */
async function preflightRun(ready: Ready, options: RunOptions, output: Output): Promise<Preflight | ExitCode> {
  const { workspace, config } = ready;
  // A landing a killed run left half-way holds the checkout's index lock: finished first, so the preflight finds no lock of the factory's own.
  const finished = await finishLeftCheckout(workspace.root, workspace.branch);
  if (finished) output.err(`notice: ${finished}`);

  let checked: Preflight;
  try {
    const worker = isPgLedger(workspace.ledger) ? (options.worker ?? `${hostname()}-${process.pid}`) : undefined;
    checked = await preflight({
      root: workspace.root,
      config,
      tip: workspace.tip,
      packets: ready.open,
      models: true,
      baseline: { signal: options.signal, ...(worker ? { worker } : {}) },
      say: (step) => output.out(`factory run: ${step} …`), // progress, like the run's own lines: stderr under --json
    });
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    output.err("factory run: interrupted during the preflight; nothing was claimed or spent.");
    return EXIT.interrupted;
  }
  const refusals = checked.checks.filter((check) => check.problem);
  if (refusals.length > 0) {
    for (const refusal of refusals) output.err(`factory run refused: ${refusal.problem}`);
    // A probe that answered was paid for, refused or not: recorded, so the night's spend is whole.
    const probes = checked.spends.map((spend) => ({ kind: "spent" as const, for: "the preflight's model probe", ...spend }));
    if (probes.length > 0) await workspace.ledger.append(probes);
    const probeCost = checked.spends.reduce((sum, spend) => sum + (spend.costUsd ?? spend.estimatedUsd ?? 0), 0);
    output.err(
      probes.length > 0
        ? `Nothing was claimed; the preflight's model probe(s) spent $${probeCost.toFixed(4)} (recorded). \`factory doctor\` shows every check.`
        : "Nothing was claimed or spent. `factory doctor` shows every check.",
    );
    return EXIT.invalid;
  }
  if (config.sandbox.kind === "none") {
    output.err('warning: [sandbox] kind = "none": agents and gates run without containment and can change anything this user can; only tripwires and gates stand between them and your machine');
  }
  if (!tracer()) {
    output.err(
      "warning: strace is not on this machine: what the tests read is not traced, so a data file outside the test directories that a change edits is not put back for the verdict (install strace: Debian/Ubuntu apt-get install strace)",
    );
  }
  return checked;
}

type RunLock = Awaited<ReturnType<typeof acquireRunLock>> & { ok: true };

/** This run's place: the file ledger's run lock, or on PostgreSQL a worker with leased claims and the fleet's landing queue. */
interface Fleet {
  lock: RunLock | ReturnType<typeof workerLock>;
  owner: { run: string; pid: number; host: string };
  shared: PgLedger | undefined;
  claims: WorkerClaims | undefined;
  landings: PgLandings | undefined;
}

/** The file ledger allows one run per repository (the run lock); on PostgreSQL every run is a worker with leased claims. */
async function joinFleet(ready: Ready, options: RunOptions, output: Output): Promise<Fleet | ExitCode> {
  const { workspace, config } = ready;
  const shared = isPgLedger(workspace.ledger) ? workspace.ledger : undefined;
  const lock = shared ? workerLock() : await acquireRunLock(workspace.root);
  if (!lock.ok) {
    output.err(`factory run: another run holds ${workspace.root}/.factory/state/run.lock (pid ${lock.holder.pid} on ${lock.holder.host}, since ${lock.holder.startedAt}).`);
    if (lock.reason === "held-elsewhere") output.err("It is on another host, so it cannot be checked; remove the lock file only if that run is certainly gone.");
    return EXIT.halted;
  }
  const owner = { run: lock.lock.run, pid: lock.lock.pid, host: lock.lock.host };
  if (!shared) return { lock, owner, shared, claims: undefined, landings: undefined };
  const worker = options.worker ?? `${hostname()}-${owner.run.slice(0, 6)}`;
  let claims: WorkerClaims;
  try {
    claims = await startWorkerClaims(shared, {
      worker,
      owner,
      leaseMs: config.workers.leaseMs,
      project: await projectOf(workspace.root, workspace.branch, config.target.remote),
      onLost: (packet, why) => output.err(`notice: ${packet}: worker ${worker} lost its claim (${why}); it stopped the attempt and writes nothing more for it`),
      onUnreachable: (message) =>
        output.err(message ? `notice: the ledger database cannot be reached (${message}); claiming stops, running attempts go on while their leases last` : "notice: the ledger database is back"),
    });
  } catch (error) {
    output.err(`factory run${error instanceof OtherProjectError ? " refused" : ""}: ${error instanceof Error ? error.message : String(error)}. Nothing was claimed or spent.`);
    return error instanceof OtherProjectError ? EXIT.invalid : EXIT.halted;
  }
  output.err(`worker ${worker}: claims on ${maskUrl(shared.url)}, lease ${Math.round(config.workers.leaseMs / 1000)} s`);
  const landings = new PgLandings(shared, worker, owner.run, config.workers.leaseMs);
  // A database restart or a network cut: the worker's reads and writes wait for it (said once), bounded.
  let waiting = false;
  shared.waitWhenUnreachable(UNREACHABLE_PATIENCE_MS, (message) => {
    if (!waiting) output.err(`notice: ${message}; waiting for it (up to ${UNREACHABLE_PATIENCE_MS / 60_000} min), nothing is claimed or landed meanwhile`);
    waiting = true;
  });
  return { lock, owner, shared, claims, landings };
}

/**
 * Before the first claim: a taken-over lock and interrupted attempts said; versions already on the target, landings the
 * target no longer has, and held attempts recorded; the run's start written. The packets whose landing is gone.
 */
async function recoverAndRecord(ready: Ready, fleet: Fleet, checked: Preflight, budget: Budget, options: RunOptions, emit: RunContext["emit"]): Promise<Set<string>> {
  const { workspace, packets } = ready;
  const { lock, owner, claims } = fleet;
  if (lock.tookOverFrom) {
    const gone = lock.pidReused ? `whose pid now belongs to another process, started after the lock was taken at ${lock.tookOverFrom.startedAt}` : "which is no longer running";
    emit({ kind: "notice", message: `took over the run lock of pid ${lock.tookOverFrom.pid}, ${gone}` });
  }
  for (const id of claims ? await claims.recover() : await recoverInFlight(workspace.ledger, owner.run)) {
    emit({ kind: "notice", packet: id, message: "its last attempt was interrupted; it is claimable again" });
  }
  const { state: ledgerState } = await workspace.ledger.read();
  // Under the landing lock: a landing of another process in this checkout records its own merge first.
  for (const id of await withLandLock(workspace.root, () => recordLandedVersions(workspace.root, workspace.ledger, workspace.branch, packets, ledgerState))) {
    emit({ kind: "notice", packet: id, message: `this version is already on ${workspace.branch} (its Factory-Packet trailers say so); recorded as merged, not run again` });
  }
  // A landing the target no longer has (undone by a person's commit, or removed by a force-push or a reset): said
  // before anything builds on it, and what requires it is not claimed (it could not pass, and would be paid for).
  const gone = await goneLandings(workspace.root, workspace.tip, workspace.branch, (await workspace.ledger.read()).state);
  for (const landing of gone) emit({ kind: "notice", packet: landing.packet, message: `warning: ${landing.text}` });
  const goneIds = new Set(gone.map((landing) => landing.packet));
  for (const id of heldBehind(packets, goneIds)) {
    const needs = packets.find((packet) => packet.id === id)?.requires.filter((dependency) => goneIds.has(dependency)) ?? [];
    emit({ kind: "notice", packet: id, message: `not claimed: it requires ${needs.length > 0 ? needs.join(", ") : "a packet"} whose landing ${workspace.branch} no longer has (above)` });
  }
  for (const id of await recordHeldVersions(workspace.root, workspace.ledger, { packets: async () => packets, state: async () => (await workspace.ledger.read()).state })) {
    emit({ kind: "notice", packet: id, message: `its held attempt, kept in git (${HELD_REFS}${id}), is recorded again: it awaits a person (factory approve ${id})` });
  }
  await workspace.ledger.append([
    { kind: "run-started", options: { once: options.once, packet: options.packet ?? null, maxCost: budget.capUsd ?? null }, ...owner },
    // The preflight's probes cost money too: recorded, and counted in this run's spend.
    ...checked.spends.map((spend) => ({ kind: "spent" as const, for: "the preflight's model probe", run: owner.run, ...spend })),
    // What waits behind a repair is known to the preflight alone: recorded, so status and the board can say it.
    ...repairsFirst(packets, checked.repairing).map((repair) => ({ kind: "repairs-first" as const, run: owner.run, ...repair })),
  ]);
  emit({ kind: "run-start", packets: packets.length, run: owner.run });
  for (const repair of checked.repairing) {
    emit({
      kind: "notice",
      message: `surface "${repair.surface}": gate ${repair.gates.map((gate) => `"${gate}"`).join(", ")} is red at the tip; ${repair.packets.join(", ")} repair${repair.packets.length === 1 ? "s" : ""} it and go${repair.packets.length === 1 ? "es" : ""} first, the surface's other packets wait for it to land`,
    });
  }
  return goneIds;
}

/** The run recorded last before this one, when it never ended (killed); the caller holds the run lock, so it is over. */
async function killedRunBefore(ledger: Ledger): Promise<RunRecord | undefined> {
  const previous = [...(await ledger.read()).state.runs.values()].at(-1);
  return previous && !previous.ended ? previous : undefined;
}

/** Packets merged since `since` whose landed commit has no mutation check yet. */
async function unmeasuredLandings(ledger: Ledger, since: string): Promise<{ id: string; commit: string }[]> {
  const { state } = await ledger.history();
  return [...state.packets.values()].flatMap((record) => {
    if (record.status.state !== "merged" || record.mutants?.commit === record.status.commit) return [];
    const { commit } = record.status;
    const merged = record.events.findLast((event) => event.kind === "merged");
    return merged?.kind === "merged" && merged.commit === commit && merged.ts >= since ? [{ id: record.id, commit }] : [];
  });
}

async function mergedAt(ledger: Ledger): Promise<Map<string, string>> {
  return new Map([...(await ledger.read()).state.packets].flatMap(([id, record]) => (record.status.state === "merged" ? [[id, record.status.commit] as const] : [])));
}

/** After the drain: the morning brief, the notification, the cheap cleaning, and the next steps. */
async function afterTheRun(
  ready: Ready,
  run: string,
  ended: {
    end: Awaited<ReturnType<typeof drainQueue>>;
    budget: Budget;
    notifier: Notifier;
    mergedBefore: ReadonlyMap<string, string>;
    /** The brief covers from here: a killed run's start, whose own brief was never written. */
    since?: string;
  },
  output: Output,
): Promise<void> {
  const { workspace } = ready;
  const { end, budget, notifier } = ended;
  let brief: string | undefined;
  try {
    brief = await writeRunBrief(workspace, run, ended.since);
  } catch (error) {
    output.err(`warning: the morning brief could not be written: ${error instanceof Error ? error.message : String(error)}`);
  }
  const counts = runCounts(ended.mergedBefore, (await workspace.ledger.read()).state);
  notifier.send({ event: "run-ended", outcome: end.outcome, ...(end.reason ? { reason: end.reason } : {}), costUsd: budget.spentUsd, ...(brief ? { report: brief } : {}), counts });
  for (const failure of await notifier.settle()) output.err(`warning: a notification was not delivered: ${failure}`);
  try {
    // The cheap cleaning of `factory gc`, at the end of a night: what this run finished with, what has aged out.
    await removeGarbage(workspace.root, await garbageOf(workspace, { gone: false }));
  } catch (error) {
    output.err(`warning: cleaning up after the run failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  await printNextSteps(workspace.ledger, output);
  if (brief) output.out(`morning brief: factory report (also ${shownPath(brief, process.cwd())})`);
}

/** How long a worker waits for an unreachable ledger database before the run stops. */
const UNREACHABLE_PATIENCE_MS = 10 * 60_000;

/** A run on the PostgreSQL ledger takes no lock of the repository's: its claims are leased in the database. */
function workerLock(): { ok: true; lock: { run: string; pid: number; host: string; startedAt: string }; release: () => Promise<void>; tookOverFrom?: undefined; pidReused?: undefined } {
  return { ok: true, lock: { run: randomUUID(), pid: process.pid, host: hostname(), startedAt: new Date().toISOString() }, release: async () => undefined };
}

/** Pure: what a run ended with: the packets it landed, and those waiting for a person or blocked now. */
export function runCounts(mergedBefore: ReadonlyMap<string, string>, state: Pick<LedgerState, "packets">): RunCounts {
  const counts: RunCounts = { merged: [], waiting: [], blocked: [] };
  for (const record of state.packets.values()) {
    const { state: now } = record.status;
    if (now === "merged" && !mergedBefore.has(record.id)) counts.merged.push(record.id);
    if (now === "awaiting_human" || now === "awaiting_answer") counts.waiting.push(record.id);
    if (now === "blocked") counts.blocked.push(record.id);
  }
  return counts;
}

/** When something stops, the next command is obvious. */
async function printNextSteps(ledger: Ledger, output: Output): Promise<void> {
  const { state } = await ledger.read();
  for (const record of state.packets.values()) {
    if (record.status.state === "awaiting_human") output.out(`${record.id} awaits a person: factory approve ${record.id}  (or: factory reject ${record.id} --reason "…")`);
    if (record.status.state === "awaiting_answer") output.out(questionLines(record.id, { text: record.status.question, suggestions: record.status.suggestions ?? [] }).join("\n"));
    if (record.status.state === "in_review")
      output.out(`${record.id} is in review: PR #${record.status.number} ${record.status.url}; the next \`factory run\` records its merge, or its checks' and reviewers' feedback`);
    if (record.status.state === "blocked") output.out(`${record.id} is blocked: ${record.status.reason}\n  see: factory status ${record.id}; then ${blockedNextStep(record.id, record.status)}`);
  }
}
