import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { diffStat } from "../git/diff.js";
import { bringHeld } from "../git/held-refs.js";
import { readFileAt } from "../git/repo.js";
import type { Output } from "../log/output.js";
import { renderTable } from "../log/table.js";
import { attemptDir, RUNS_DIR } from "../loop/context.js";
import { agentReport } from "../status/agent-report.js";
import { buildReport, type HeldDetail, type Report, reportHtml, reportText } from "../status/report.js";
import { terminalInert } from "../util/inert-text.js";
import { shownPath } from "../util/shown-path.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadBoard } from "./status.js";
import { loadWorkspaceOrReport, type Workspace } from "./workspace.js";

export interface ReportOptions {
  cwd: string;
  /** An ISO date or time: report everything since then instead of the last run. */
  since?: string;
  /** Also write the brief as a self-contained HTML page here (never over an existing file). */
  html?: string;
  /** Print the brief as JSON (the same content) instead of text. */
  json?: boolean;
  /** Instead of the brief: per agent and model, what it claimed against what the factory found. */
  agents?: boolean;
  output: Output;
}

/** `factory report`: the morning brief of the last run (or since a date), as text, and as HTML with --html. */
export async function report(options: ReportOptions): Promise<ExitCode> {
  const { output } = options;
  let since: string | undefined;
  if (options.since !== undefined) {
    const parsed = Date.parse(options.since);
    if (Number.isNaN(parsed)) {
      output.err(`--since: "${options.since}" is not a date; use e.g. 2026-11-30 or 2026-11-30T18:00`);
      return EXIT.invalid;
    }
    since = new Date(parsed).toISOString();
  }
  // A path is the person's, from where they run the command; said back the same way.
  const html = options.html === undefined ? undefined : resolve(options.cwd, options.html);
  if (html !== undefined && existsSync(html)) {
    output.err(`--html: ${options.html} exists; name a new file (the factory never writes over a file of yours)`);
    return EXIT.invalid;
  }
  const workspace = await loadWorkspaceOrReport(options.cwd, output);
  if (!workspace) return EXIT.invalid;
  if (options.agents) return agentsReport(workspace, output, Boolean(options.json));
  const brief = await buildBrief(workspace, since);
  if (options.json) output.out(JSON.stringify(brief, null, 2));
  else if (html === undefined) for (const line of reportText(brief)) output.out(line);
  if (html !== undefined) {
    writeFileSync(html, reportHtml(brief), { flag: "wx" });
    const said = `written: ${shownPath(html, options.cwd)}`;
    // With --json, stdout is the JSON alone; without it, --html prints only where the page is.
    if (options.json) output.err(said);
    else output.out(said);
  }
  return EXIT.ok;
}

/** `factory report --agents`: which agent to trust, from the ledger (every worker's). */
async function agentsReport(workspace: Workspace, output: Output, json: boolean): Promise<ExitCode> {
  const history = await workspace.ledger.history();
  const tiers = workspace.config?.tiers ?? [];
  const rows = agentReport([...history.state.packets.values()], (name) => {
    const tier = tiers.find((candidate) => candidate.name === name);
    return tier ? { agent: tier.agent, model: tier.model } : undefined;
  });
  if (json) {
    output.out(JSON.stringify({ agents: rows }, null, 2));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    output.out("No agent has run yet: the ledger records no implementer or reviewer call.");
    return EXIT.ok;
  }
  const usd = (value: number | null): string => (value === null ? "-" : `$${value.toFixed(2)}`);
  const implementers = rows.filter((row) => row.role === "implementer");
  const reviewers = rows.filter((row) => row.role === "reviewer");
  if (implementers.length > 0) {
    output.out(
      await renderTable(
        ["IMPLEMENTER", "MODEL", "ATTEMPTS", "MERGED 1ST", "MERGED", "SAID DONE, GATE FAILED", "TAMPER/SCOPE", "QUESTIONS", "COST", "PER MERGED"],
        implementers.map((row) => [
          row.agent,
          row.model,
          String(row.attempts),
          String(row.merged_first_time),
          String(row.merged),
          String(row.claimed_complete_gate_failed),
          String(row.tamper_or_scope),
          String(row.questions),
          usd(row.cost_usd),
          usd(row.cost_per_merged_usd),
        ]),
      ),
    );
  }
  if (reviewers.length > 0) {
    output.out("");
    output.out(
      await renderTable(
        ["REVIEWER", "MODEL", "REVIEWS", "RULINGS OVERRIDDEN", "COST"],
        reviewers.map((row) => [row.agent, row.model, String(row.attempts), String(row.overridden), usd(row.cost_usd)]),
      ),
    );
  }
  return EXIT.ok;
}

/** The brief of a window: the last run (or the one named), else since `since`; the held packets' details from git and the run directory. */
export async function buildBrief(workspace: Workspace, since: string | undefined, runId?: string): Promise<Report> {
  const { ledger, board } = await loadBoard(workspace, await workspace.ledger.history());
  const runs = [...ledger.runs.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const run = since === undefined ? (runId ? runs.find((candidate) => candidate.run === runId) : runs.at(-1)) : undefined;
  const until = new Date().toISOString();
  const held = new Map<string, HeldDetail>();
  const awaiting = [...ledger.packets.values()].flatMap((record) => (record.status.state === "awaiting_human" ? [{ record, status: record.status }] : []));
  // A packet held by another clone's worker: its commit comes from the remote's held refs, fetched when missing.
  const here = await bringHeld(
    workspace.root,
    workspace.config?.target.remote,
    awaiting.map(({ status }) => status.commit),
  );
  for (const { record, status } of awaiting) {
    held.set(
      record.id,
      here.missing.includes(status.commit)
        ? { diffStat: `the held commit ${status.commit.slice(0, 10)} is not in this clone; ${here.remedy}`, snippets: {} }
        : await heldDetail(workspace.root, record.id, status, record.events),
    );
  }
  return buildReport({
    board,
    ledger,
    held,
    since: since ?? run?.startedAt ?? new Date(0).toISOString(),
    until: run?.ended?.at ?? until,
    ...(run ? { run: { id: run.run, ...(run.ended ? { outcome: run.ended.outcome, ...(run.ended.reason ? { reason: run.ended.reason } : {}) } : {}) } } : {}),
    ...(workspace.config?.limits.maxCostUsd !== undefined ? { capUsd: workspace.config.limits.maxCostUsd } : {}),
  });
}

/** Writes the brief of a run under .factory/runs/ (text and HTML) and returns the HTML's path. */
export async function writeRunBrief(workspace: Workspace, runId: string, since?: string): Promise<string> {
  const brief = await buildBrief(workspace, since, runId);
  const stem = join(workspace.root, RUNS_DIR, `report-${runId}`);
  writeFileSync(`${stem}.txt`, terminalInert(`${reportText(brief).join("\n")}\n`)); // a file a person reads: agent text inert
  writeFileSync(`${stem}.html`, reportHtml(brief));
  return `${stem}.html`;
}

/** The implementer's account of an attempt (a claim), from the copy of its result file the factory kept: the correction round's when there was one. */
export function implementerClaims(root: string, id: string, attempt: number): Pick<HeldDetail, "summary" | "deviations"> {
  const runDir = attemptDir(root, id, attempt);
  for (const name of ["implementer-output-1.json", "implementer-output.json"]) {
    const path = join(runDir, name);
    if (!existsSync(path)) continue;
    try {
      const result = JSON.parse(readFileSync(path, "utf8")) as { summary?: unknown; deviations?: unknown };
      return {
        ...(typeof result.summary === "string" ? { summary: result.summary } : {}),
        ...(Array.isArray(result.deviations)
          ? { deviations: result.deviations.filter((d): d is { from_packet: string; reason: string } => typeof d?.from_packet === "string" && typeof d?.reason === "string") }
          : {}),
      };
    } catch {
      return {}; // a result file that is not JSON was refused at the time; nothing to show
    }
  }
  return {};
}

async function heldDetail(root: string, id: string, held: { attempt: number; commit: string; fork: string }, events: readonly { kind: string }[]): Promise<HeldDetail> {
  const detail: HeldDetail = { diffStat: await diffStat(root, held.fork, held.commit), snippets: {}, ...implementerClaims(root, id, held.attempt) };
  for (const event of events) {
    if (event.kind !== "review-recorded") continue;
    for (const ruling of (event as { rulings?: { evidence?: string }[] }).rulings ?? []) {
      const match = ruling.evidence ? /^(.+):(\d+)$/.exec(ruling.evidence) : null;
      if (!match || !ruling.evidence) continue;
      const text = await readFileAt(root, held.commit, match[1] ?? "");
      const line = text?.split("\n")[Number(match[2]) - 1];
      if (line !== undefined) detail.snippets[ruling.evidence] = line;
    }
  }
  return detail;
}
