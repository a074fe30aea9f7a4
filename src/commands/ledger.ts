import { relative } from "node:path";
import { HELD_REFS } from "../git/held-refs.js";
import { type EventBody, stamp } from "../ledger/events.js";
import { emptyState, foldLedger, type LedgerState, type PacketRecord, type PacketStatus } from "../ledger/fold.js";
import { isPgLedger } from "../ledger/open.js";
import { eventLine } from "../ledger/pg-ledger.js";
import { acquireRunLock } from "../ledger/run-lock.js";
import { LEDGER_FILE, restartLedger, STATE_DIR } from "../ledger/store.js";
import { afterBreak, lineRanges, numberedFromLines, readNumbered } from "../ledger/verify.js";
import type { Output } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { heldEvents, readHeld } from "../loop/held.js";
import { landedEvents } from "../loop/reconcile.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonInput, personName, refuseAgents } from "./packet-record.js";
import { loadWorkspaceOrReport, type Workspace } from "./workspace.js";

const FILE = `${STATE_DIR}/${LEDGER_FILE}`;

/**
 * `factory ledger verify`: reads the whole ledger, trusting no snapshot, and
 * says whether its hash chain holds. When it breaks: the first bad line,
 * and every packet, run and dollar whose record rests on the lines from
 * there on, each with what git proves of it. Exit 0 when the chain holds,
 * 1 when it breaks.
 */
export async function ledgerVerify(options: { cwd: string; output: Output; json?: boolean }): Promise<ExitCode> {
  const { output } = options;
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  const shared = isPgLedger(workspace.ledger);
  const FILE = workspace.ledger.where;
  const ledger = shared ? numberedFromLines(await workspace.ledger.lines(), eventLine) : await readNumbered(workspace.root);
  const json = (value: object): void => output.out(JSON.stringify({ ledger: FILE, ...value }, null, 2));
  if (!ledger) {
    if (options.json) json({ holds: true, entries: 0, packets: 0, runs: 0, cost_usd: 0, warnings: [] });
    else output.out(`${FILE}: there is no ledger (yet). What merged and what is held are read again from git by the next command.`);
    return EXIT.ok;
  }
  const LINES = shared ? "events" : "lines";
  if (!options.json) for (const warning of ledger.warnings) output.err(`warning: ${warning}`);
  const restarted = ledger.events.find(({ event }) => event.kind === "ledger-restarted")?.event;
  const repaired = restarted?.kind === "ledger-restarted" ? { by: restarted.by, at: restarted.ts, before: `${STATE_DIR}/${restarted.from}` } : undefined;
  const started = repaired ? ` It was started by \`factory ledger repair\` (${repaired.by}, ${repaired.at}); the ledger before it is ${repaired.before}.` : "";
  const after = afterBreak(ledger);
  if (!after) {
    const state = foldLedger(ledger.events.map(({ event }) => event));
    if (options.json) {
      json({ holds: true, entries: ledger.lines, packets: state.packets.size, runs: state.runs.size, cost_usd: state.costUsd, warnings: ledger.warnings, ...(repaired ? { repaired } : {}) });
      return EXIT.ok;
    }
    const ignored = ledger.warnings.length > 0 ? ` ${ledger.warnings.length} line(s) could not be used (above) and are ignored.` : "";
    output.out(`${FILE}: the hash chain holds, ${LINES} 1–${ledger.lines}: ${state.packets.size} packet(s), ${state.runs.size} run(s), $${state.costUsd.toFixed(2)} recorded.${ignored}${started}`);
    return EXIT.ok;
  }
  const proven = await provenState(workspace);
  if (options.json) {
    json({
      holds: false,
      entries: ledger.lines,
      warnings: ledger.warnings,
      broken: {
        at: after.from,
        reason: ledger.broken?.reason,
        untrusted: { from: after.from, to: after.to },
        packets: after.packets.map((packet) => ({ id: packet.id, ledger_says: describeStatus(packet.status), resting_on: packet.lines, git_proves: proofOf(packet.id, packet.status, proven) })),
        runs: after.runs,
        cost_usd: after.costUsd,
      },
      ...(repaired ? { repaired } : {}),
    });
    return EXIT.halted;
  }
  output.out(`${shared ? eventLine(after.from) : `${FILE}:${after.from}`}: the hash chain breaks here: ${ledger.broken?.reason}.`);
  output.out(`${shared ? "Events" : "Lines"} ${after.from}–${after.to} cannot be trusted, and with them:`);
  if (after.packets.length > 0) {
    const rows = after.packets.map((packet) => [
      packet.id,
      describeStatus(packet.status),
      `${packet.lines.length > 1 ? "lines" : "line"} ${lineRanges(packet.lines)}`,
      proofOf(packet.id, packet.status, proven),
    ]);
    output.out(indent(await renderTable(["packet", "the ledger says", "resting on", "what git proves"], rows)));
  }
  if (after.runs.length > 0) output.out(`  run(s) started from there on: ${after.runs.join(", ")}`);
  output.out(`  $${after.costUsd.toFixed(2)} of spend recorded from there on`);
  output.out(
    `\`factory ledger repair\` starts a new ledger from what git proves (merged from the Factory-Packet trailers on ${workspace.branch}, held from ${HELD_REFS}), keeps this one beside it, and says what is lost.${started}`,
  );
  return EXIT.halted;
}

export interface RepairOptions {
  cwd: string;
  output: Output;
  env: NodeJS.ProcessEnv;
  person: PersonInput;
  now?: Date;
}

/**
 * `factory ledger repair`: a person's command. With the ledger's chain
 * broken, starts a new chained ledger from what git proves (merged packets
 * from the target's trailers, held ones from `refs/factory/held/`), keeps
 * the old file beside it, and says what is lost (attempts, costs, blocks).
 * Never while a run is going on; never when the chain holds.
 */
export async function ledgerRepair(options: RepairOptions): Promise<ExitCode> {
  const { output } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory ledger repair refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  if (isPgLedger(workspace.ledger)) {
    output.err(
      `factory ledger repair works on the file ledger; ${workspace.ledger.where} is a PostgreSQL ledger: \`factory ledger verify\` names the first bad event, and a database backup restored from before it is the repair. Nothing changed.`,
    );
    return EXIT.invalid;
  }
  const lock = await acquireRunLock(workspace.root);
  if (!lock.ok) {
    output.err(`factory ledger repair: a run holds ${workspace.root}/${STATE_DIR}/run.lock (pid ${lock.holder.pid} on ${lock.holder.host}); repair the ledger when it has ended. Nothing changed.`);
    return EXIT.invalid;
  }
  try {
    const ledger = await readNumbered(workspace.root);
    if (!ledger) {
      output.out(`${FILE}: there is no ledger to repair. What merged and what is held are read again from git by the next command.`);
      return EXIT.ok;
    }
    if (!ledger.broken) {
      output.out(`${FILE}: the hash chain holds (lines 1–${ledger.lines}); there is nothing to repair (\`factory ledger verify\` shows it). Nothing changed.`);
      return EXIT.ok;
    }
    const proven = await provenEvents(workspace);
    const before = foldLedger(ledger.events.map(({ event }) => event));
    const after = foldLedger(proven.map((body) => stamp(body)));
    output.out(`${FILE}:${ledger.broken.line}: the hash chain breaks here: ${ledger.broken.reason}.`);
    output.out(`A new ledger would start from what git proves; the old one is kept beside it:`);
    output.out(indent(await renderTable(["packet", "the ledger says", "the new ledger says", "lost"], repairRows(before, after))));
    const lostUsd = before.costUsd - after.costUsd;
    const spend = lostUsd > 0.005 ? `$${lostUsd.toFixed(2)} of the $${before.costUsd.toFixed(2)} of spend it records` : "its spend beyond the held attempts' (kept in git with them)";
    output.out(`  The runs' history and ${spend} stay only in the old file.`);
    if (!(await confirmByPerson("ledger repair", "repair", "start the new ledger", options.person, output))) return EXIT.invalid;
    const by = await personName(workspace.root);
    const kept = await restartLedger(workspace.root, (from) => [{ kind: "ledger-restarted", from, by, brokenAt: ledger.broken?.line }, ...proven], options.now);
    output.out(`started a new ${FILE} (${proven.length + 1} event(s)); the old ledger is kept at ${relative(workspace.root, kept)}`);
    return EXIT.ok;
  } finally {
    await lock.release();
  }
}

/** What git proves of the queue's packets, as ledger events: merged from the target's trailers, then held from `refs/factory/held/`. */
async function provenEvents(workspace: Workspace): Promise<EventBody[]> {
  const packets = workspace.queue.packets;
  const landed = await landedEvents(workspace.root, workspace.branch, packets, emptyState());
  const state = foldLedger(landed.map((body) => stamp(body)));
  return [...landed, ...heldEvents(await readHeld(workspace.root), packets, state)];
}

async function provenState(workspace: Workspace): Promise<LedgerState> {
  return foldLedger((await provenEvents(workspace)).map((body) => stamp(body)));
}

/** Pure: what git proves of one packet the broken part of the ledger speaks of. */
function proofOf(id: string, said: PacketStatus, proven: LedgerState): string {
  const status = proven.packets.get(id)?.status;
  if (status?.state === "merged") return `merged: a Factory-Packet trailer at ${status.commit.slice(0, 10)}`;
  if (status?.state === "awaiting_human") return `held for a person: ${HELD_REFS}${id}`;
  return said.state === "queued" ? "nothing (it is queued either way)" : "nothing: a repair sends it back to the queue";
}

/** Pure: a row per packet of either ledger: its state before and after, and what of it is lost. */
function repairRows(before: LedgerState, after: LedgerState): string[][] {
  const ids = [...new Set([...before.packets.keys(), ...after.packets.keys()])].sort();
  return ids.map((id) => {
    const old = before.packets.get(id);
    const next = after.packets.get(id);
    return [id, old ? describeRecord(old) : "(nothing)", next ? describeStatus(next.status) : "(nothing: queued if still in the queue)", lost(old, next)];
  });
}

function lost(old: PacketRecord | undefined, next: PacketRecord | undefined): string {
  if (!old) return "";
  const attempts = old.lastAttempt - (next?.lastAttempt ?? 0);
  const costUsd = old.costUsd - (next?.costUsd ?? 0);
  const parts = [
    ...(attempts > 0 ? [`${attempts} attempt(s) of history`] : []),
    ...(costUsd > 0.005 ? [`$${costUsd.toFixed(2)}`] : []),
    ...(old.status.state === "blocked" && next?.status.state !== "blocked" ? ["its block"] : []),
  ];
  return parts.join(", ");
}

function describeRecord(record: PacketRecord): string {
  return `${describeStatus(record.status)} (${record.lastAttempt} attempt(s), $${record.costUsd.toFixed(2)})`;
}

function describeStatus(status: PacketStatus): string {
  return status.state === "awaiting_human" ? "awaiting_human" : status.state;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
