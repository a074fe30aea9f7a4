import type { LedgerEvent } from "../ledger/events.js";
import type { LedgerState, PacketHistory } from "../ledger/fold.js";
import { mutantsFlag } from "../loop/mutation-verdict.js";
import { type Board, questionLines } from "./board.js";
import { type FlakyRow, flakyText } from "./flaky-text.js";
import { blockedNextStep } from "./next-step.js";
import { type RoleSpend, spendByRole } from "./spend.js";

/** What the report shows of a held packet that only git and the run directory know. */
export interface HeldDetail {
  diffStat: string;
  /** The implementer's account (a claim), from its result file. */
  summary?: string;
  deviations?: { from_packet: string; reason: string }[];
  /** `path:line` → that line of the held commit, for the rulings' evidence. */
  snippets: Record<string, string>;
}

export interface Report {
  since: string;
  until: string;
  /** The run the report is about, when it is about one. */
  run?: { id: string; outcome?: string; reason?: string };
  merged: {
    id: string;
    goal: string;
    commit: string;
    attempts: number;
    /** The number of its newest attempt, where attempts were not counted (interrupted, a question, refunded). */
    lastAttempt?: number;
    costUsd: number;
    wallMs: number;
    tests?: string;
    mutants?: { made: number; killed: number; reason?: string; flag?: string; unrun?: number };
  }[];
  held: {
    id: string;
    goal: string;
    attempt: number;
    commit: string;
    costUsd: number;
    wallMs: number;
    detail: HeldDetail;
    rulings: { id: string; status: string; evidence?: string }[];
    findings: { severity: string; claim: string; where?: string }[];
  }[];
  blocked: {
    id: string;
    goal: string;
    reason: string;
    next: string;
    fingerprint?: string;
    costUsd: number;
    wallMs: number;
    /** What failed in its last attempt: the gates that failed with their findings, the rulings against it with their evidence. */
    evidence: string[];
    /** Packets that wait on it (directly or through others) and so were not attempted. */
    waiting: { id: string; goal: string }[];
  }[];
  /** Packets whose implementer asked a person a question, waiting for `factory answer`. */
  questions: { id: string; goal: string; attempt: number; question: string; suggestions: string[] }[];
  notAttempted: { id: string; goal: string; why: string }[];
  /** Tests known flaky at the tip (left out of the verdicts that met them) until a rerun finds them steady. */
  flaky: (FlakyRow & { at: string })[];
  /** The newest `factory assess` ruling made in the window, per packet; `current`: on the packet's version at the tip. */
  assessed: { id: string; goal: string; ruling: string; tier: string; current: boolean; findings: { claim: string; quote?: string; where?: string }[] }[];
  spend: RoleSpend[];
  /** Paid calls of no packet in the window (the preflight's probes, `factory cut`'s planner, doctor's canaries), by what they were for. */
  otherSpend: { for: string; usd: number }[];
  totalUsd: number;
  capUsd?: number;
}

export interface ReportInput {
  board: Board;
  ledger: LedgerState<PacketHistory>;
  /** The window: events at or after `since` (and before `until`). */
  since: string;
  until: string;
  run?: Report["run"];
  capUsd?: number;
  held: ReadonlyMap<string, HeldDetail>;
}

/** Pure: the morning brief from the board and the ledger, limited to a window (the last run, or since a date). */
export function buildReport(input: ReportInput): Report {
  const inWindow = (event: LedgerEvent): boolean => event.ts >= input.since && event.ts <= input.until;
  const report: Report = {
    since: input.since,
    until: input.until,
    ...(input.run ? { run: input.run } : {}),
    merged: [],
    held: [],
    blocked: [],
    questions: [],
    notAttempted: [],
    flaky: Object.values(input.ledger.flaky ?? {})
      .map(({ test, gate, failed, runs, packet, at }) => ({ test, gate, failed, runs, packet, at }))
      .sort((a, b) => a.test.localeCompare(b.test)),
    assessed: [],
    spend: [],
    otherSpend: [],
    totalUsd: 0,
    ...(input.capUsd !== undefined ? { capUsd: input.capUsd } : {}),
  };
  const windowEvents: LedgerEvent[] = [];
  /** Packets not attempted because a packet blocked in this window holds them: grouped under it. */
  const behind = new Map<string, { id: string; goal: string }[]>();
  for (const row of input.board.packets) {
    const record = input.ledger.packets.get(row.id);
    const events = (record?.events ?? []).filter(inWindow);
    windowEvents.push(...events);
    const goal = row.goal ?? "";
    const costUsd = spendByRole(events).reduce((sum, spend) => sum + spend.usd, 0);
    const ruled = events.findLast((event) => event.kind === "assessed");
    if (ruled?.kind === "assessed") report.assessed.push({ id: row.id, goal, ruling: ruled.ruling, tier: ruled.tier, current: ruled.sha256 === row.sha256, findings: ruled.findings });
    const wallMs = events.length ? Date.parse(events.at(-1)?.ts ?? "") - Date.parse(events[0]?.ts ?? "") : 0;
    const attempted = events.some((event) => event.kind === "claimed" || event.kind === "merged");
    if (!attempted) {
      const stuck = row.state === "queued" ? blockedUpstream(row.requires, input.board) : undefined;
      if (stuck) behind.set(stuck.id, [...(behind.get(stuck.id) ?? []), { id: row.id, goal }]);
      else if (row.state !== "merged") report.notAttempted.push({ id: row.id, goal, why: notAttemptedWhy(row.state, row.reason, row.requires, input.board) });
      continue;
    }
    const status = record?.status;
    if (status?.state === "merged") {
      const tests = testCounts(events);
      const mutants = mutantsOf(events, status.commit);
      report.merged.push({ id: row.id, goal, commit: status.commit, ...attemptsFields(record), costUsd, wallMs, ...(tests ? { tests } : {}), ...(mutants ? { mutants } : {}) });
    } else if (status?.state === "awaiting_human") {
      const reviewed = [...events].reverse().find((event) => event.kind === "review-recorded" && event.attempt === status.attempt);
      report.held.push({
        id: row.id,
        goal,
        attempt: status.attempt,
        commit: status.commit,
        costUsd,
        wallMs,
        detail: input.held.get(row.id) ?? { diffStat: "", snippets: {} },
        rulings: reviewed?.kind === "review-recorded" ? (reviewed.rulings ?? []) : [],
        findings: reviewed?.kind === "review-recorded" ? (reviewed.findings ?? []) : [],
      });
    } else if (status?.state === "awaiting_answer") {
      report.questions.push({ id: row.id, goal, attempt: status.attempt, question: status.question, suggestions: status.suggestions ?? [] });
    } else if (status?.state === "blocked") {
      report.blocked.push({
        id: row.id,
        goal,
        reason: status.reason,
        next: blockedNextStep(row.id, status),
        ...(record?.fingerprints.length ? { fingerprint: record.fingerprints.at(-1) } : {}),
        costUsd,
        wallMs,
        evidence: lastAttemptEvidence(events),
        waiting: [],
      });
    } else {
      report.notAttempted.push({ id: row.id, goal, why: `${row.state}${row.reason ? `: ${row.reason}` : ""}` });
    }
  }
  for (const [id, waiting] of behind) {
    const blocked = report.blocked.find((row) => row.id === id);
    if (blocked) blocked.waiting.push(...waiting);
    else
      for (const row of waiting)
        report.notAttempted.push({ id: row.id, goal: row.goal, why: notAttemptedWhy("queued", null, input.board.packets.find((candidate) => candidate.id === row.id)?.requires ?? [], input.board) });
  }
  report.spend = spendByRole(windowEvents);
  const other = new Map<string, number>();
  for (const spent of input.ledger.spent ?? []) {
    if (spent.ts >= input.since && spent.ts <= input.until) other.set(spent.for, (other.get(spent.for) ?? 0) + spent.usd);
  }
  report.otherSpend = [...other].map(([what, usd]) => ({ for: what, usd }));
  report.totalUsd = [...report.spend, ...report.otherSpend].reduce((sum, spend) => sum + spend.usd, 0);
  return report;
}

/** Pure: what the mutation check measured of a landed commit, as the brief shows it; undefined when it was not measured. */
function mutantsOf(events: readonly LedgerEvent[], commit: string) {
  const measured = events.findLast((event) => event.kind === "mutants-measured" && event.commit === commit);
  if (measured?.kind !== "mutants-measured") return undefined;
  const flag = mutantsFlag(measured);
  return {
    made: measured.made,
    killed: measured.killed,
    ...(measured.reason ? { reason: measured.reason } : {}),
    ...(flag ? { flag } : {}),
    ...(measured.unrun ? { unrun: measured.unrun } : {}),
  };
}

function notAttemptedWhy(state: string, reason: string | null, requires: readonly string[], board: Board): string {
  if (state === "invalid") return `the packet file is invalid: ${reason ?? "see factory lint"}`;
  if (state === "blocked") return `blocked before this window: ${reason ?? ""}`;
  if (state === "awaiting_human") return "held for a person before this window";
  const waiting = requires.filter((id) => board.packets.find((row) => row.id === id)?.state !== "merged");
  const stuck = blockedUpstream(requires, board);
  if (stuck) return `stuck behind ${stuck.id}, which is blocked (${stuck.reason}): nothing waiting on it runs until it is unblocked or fixed`;
  if (waiting.length) return `waits for ${waiting.join(", ")}`;
  return "the run ended before it (halted, the cost cap, or --once)";
}

/** The first blocked packet a packet waits on, directly or through others. */
function blockedUpstream(requires: readonly string[], board: Board, seen: Set<string> = new Set()): { id: string; reason: string } | undefined {
  for (const id of requires) {
    if (seen.has(id)) continue;
    seen.add(id);
    const row = board.packets.find((candidate) => candidate.id === id);
    if (!row || row.state === "merged") continue;
    if (row.state === "blocked") return { id, reason: row.reason ?? "see factory show" };
    const deeper = blockedUpstream(row.requires, board, seen);
    if (deeper) return deeper;
  }
  return undefined;
}

/**
 * Pure: what failed in the last attempt of `events`: what the factory told
 * the attempt back (the gates' findings, the review's rulings against it),
 * a few lines each; without that (the attempt ended otherwise), its failed
 * gates and the rulings against it.
 */
function lastAttemptEvidence(events: readonly LedgerEvent[]): string[] {
  const attempt = Math.max(0, ...events.map((event) => ("attempt" in event && typeof event.attempt === "number" ? event.attempt : 0)));
  const told: string[] = [];
  const seen: string[] = [];
  const quote = (text: string): string =>
    text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .slice(0, EVIDENCE_LINES)
      .map((line) => line.trim())
      .join(" | ");
  for (const event of events) {
    if (!("attempt" in event) || event.attempt !== attempt) continue;
    if (event.kind === "decided") told.push(...(event.feedback ?? []).map(quote).filter((line) => line !== ""));
    if (event.kind === "gate-finished" && (event.result === "fail" || event.result === "error")) {
      seen.push(`gate ${event.gate} ${event.result === "fail" ? "failed" : "could not run"}${event.detail ? `: ${quote(event.detail)}` : ""}`);
    }
    if (event.kind === "review-recorded") {
      for (const ruling of event.rulings ?? []) if (ruling.status !== "held") seen.push(`${ruling.id}: ${ruling.status}${ruling.evidence ? ` at ${ruling.evidence}` : ""}`);
      for (const finding of event.findings ?? []) seen.push(`finding (${finding.severity})${finding.where ? ` ${finding.where}` : ""}: ${finding.claim}`);
    }
  }
  return told.length > 0 ? told : seen;
}

/** How many lines of a failed gate's findings the brief quotes (`factory show` has them all). */
const EVIDENCE_LINES = 3;

/** The tests gates' counts of the attempt that landed ("12/12 passed"), from its gate results. */
function testCounts(events: readonly LedgerEvent[]): string | undefined {
  const merged = [...events].reverse().find((event) => event.kind === "merged");
  if (merged?.kind !== "merged") return undefined;
  const counts = events
    .filter((event) => event.kind === "gate-finished" && event.attempt === merged.attempt && /^\d+\/\d+ passed/.test(event.detail ?? ""))
    .map((event) => (event.kind === "gate-finished" ? `${event.gate} ${/^\d+\/\d+/.exec(event.detail ?? "")?.[0] ?? ""}` : ""));
  return counts.length ? [...new Set(counts)].join(", ") : undefined;
}

/** Pure: the brief as text, for the terminal. */
export function reportText(report: Report): string[] {
  const lines = [
    `Morning brief: ${report.since} to ${report.until}${report.run ? ` (run ${report.run.id}${report.run.outcome ? `, ${report.run.outcome}` : ""}${report.run.reason ? `: ${report.run.reason}` : ""})` : ""}`,
  ];
  lines.push("", `Merged (${report.merged.length})`);
  for (const row of report.merged) {
    lines.push(
      `  ${row.id}  ${row.commit.slice(0, 10)}  ${attemptsOf(row)}  $${row.costUsd.toFixed(2)}  ${minutes(row.wallMs)}  ${row.goal}${row.tests ? `  [tests ${row.tests}]` : ""}${row.mutants && !row.mutants.reason ? `  [mutants killed ${row.mutants.killed}/${row.mutants.made}]` : ""}`,
    );
    if (row.mutants?.flag) lines.push(`    ${row.mutants.flag}: its planted tests killed none of ${row.mutants.made} mutants of its changed lines`);
    if (row.mutants?.unrun) lines.push(`    mutants: ${row.mutants.unrun} more not run: the mutation check's share of the night ran out ([planning] mutants_share)`);
  }
  lines.push("", `Held for you (${report.held.length})`);
  for (const row of report.held) {
    lines.push(`  ${row.id}  attempt ${row.attempt}  $${row.costUsd.toFixed(2)}  ${minutes(row.wallMs)}  ${row.goal}`);
    if (row.detail.diffStat)
      lines.push(
        ...row.detail.diffStat
          .trimEnd()
          .split("\n")
          .map((line) => `    ${line.trim()}`),
      );
    if (row.detail.summary) lines.push(`    the agent says: ${row.detail.summary}`);
    for (const deviation of row.detail.deviations ?? []) lines.push(`    deviation from "${deviation.from_packet}": ${deviation.reason}`);
    for (const ruling of row.rulings) {
      const snippet = ruling.evidence ? row.detail.snippets[ruling.evidence] : undefined;
      lines.push(`    ${ruling.id}: ${ruling.status}${ruling.evidence ? ` at ${ruling.evidence}` : ""}${snippet !== undefined ? `  | ${snippet.trim()}` : ""}`);
    }
    for (const finding of row.findings) lines.push(`    finding (${finding.severity})${finding.where ? ` ${finding.where}` : ""}: ${finding.claim}`);
    lines.push(`    factory diff ${row.id}; factory approve ${row.id}  or  factory reject ${row.id} --reason "…"`);
  }
  if (report.questions.length) {
    lines.push("", `Questions for you (${report.questions.length})`);
    for (const row of report.questions) lines.push(...questionLines(row.id, { text: row.question, suggestions: row.suggestions }).map((line) => `  ${line}`));
  }
  lines.push("", `Blocked (${report.blocked.length})`);
  for (const row of report.blocked) {
    lines.push(`  ${row.id}  $${row.costUsd.toFixed(2)}  ${row.goal}`);
    lines.push(`    ${row.reason}${row.fingerprint ? `  [${row.fingerprint}]` : ""}`);
    for (const line of row.evidence) lines.push(`    - ${line}`);
    lines.push(`    factory show ${row.id}; then ${row.next}`);
    if (row.waiting.length) lines.push(`    waiting behind it: ${row.waiting.map((waiting) => `${waiting.id} (${waiting.goal})`).join(", ")}`);
  }
  lines.push("", `Not attempted (${report.notAttempted.length})`);
  for (const row of report.notAttempted) lines.push(`  ${row.id}  ${row.why}`);
  if (report.flaky.length) lines.push("", `Flaky tests (${report.flaky.length})`);
  for (const row of report.flaky) lines.push(`  ${flakyText(row)}`);
  if (report.assessed.length) lines.push("", `Assessed (${report.assessed.length})`);
  for (const row of report.assessed) {
    lines.push(`  ${row.id}  ${row.ruling} (tier ${row.tier})${row.current ? "" : " — on an older version of the packet"}  ${row.goal}`);
    for (const finding of row.findings) lines.push(`    - ${finding.claim}${finding.where ? ` (${finding.where})` : ""}${finding.quote ? ` — spec: "${finding.quote}"` : ""}`);
  }
  lines.push(
    "",
    `Spend: $${report.totalUsd.toFixed(2)}${report.capUsd !== undefined ? ` of a $${report.capUsd.toFixed(2)} cap` : ""}${report.spend.length ? ` — ${report.spend.map((spend) => `${spend.role} $${spend.usd.toFixed(2)}`).join(", ")}` : ""}${report.otherSpend.length ? `; besides the packets: ${report.otherSpend.map((spend) => `${spend.for} $${spend.usd.toFixed(2)}`).join(", ")}` : ""}`,
  );
  return lines;
}

/** Pure: the brief as one self-contained HTML page: no scripts, no network, no external assets. */
export function reportHtml(report: Report): string {
  const e = escapeHtml;
  const section = (title: string, count: number, body: string): string => `<section><h2>${e(title)} (${count})</h2>${count ? body : "<p class=none>none</p>"}</section>`;
  const merged = `<table><tr><th>packet</th><th>commit</th><th>attempts</th><th>cost</th><th>wall time</th><th>goal</th><th>tests</th><th>mutants killed</th></tr>${report.merged
    .map(
      (row) =>
        `<tr><td>${e(row.id)}</td><td><code>${e(row.commit.slice(0, 10))}</code></td><td>${e(attemptsOf(row))}</td><td>$${row.costUsd.toFixed(2)}</td><td>${e(minutes(row.wallMs))}</td><td>${e(row.goal)}</td><td>${e(row.tests ?? "")}</td><td${row.mutants?.flag ? ' class="violated"' : ""}>${row.mutants && !row.mutants.reason ? `${row.mutants.killed}/${row.mutants.made}${row.mutants.flag ? ` — ${e(row.mutants.flag)}` : ""}${row.mutants.unrun ? ` (${row.mutants.unrun} not run: out of time)` : ""}` : ""}</td></tr>`,
    )
    .join("")}</table>`;
  const questions = report.questions
    .map(
      (row) =>
        `<article id="${e(row.id)}"><h3>${e(row.id)}: ${e(row.goal)}</h3><p><b>The implementer asks</b> (its words): ${e(row.question)}</p>${
          row.suggestions.length ? `<ol>${row.suggestions.map((suggestion) => `<li>${e(suggestion)}</li>`).join("")}</ol>` : ""
        }<pre class=cmd>factory answer ${e(row.id)} "…"</pre></article>`,
    )
    .join("");
  const held = report.held
    .map(
      (row) => `<article id="${e(row.id)}"><h3>${e(row.id)}: ${e(row.goal)}</h3>
<p>attempt ${row.attempt}, $${row.costUsd.toFixed(2)}, ${e(minutes(row.wallMs))}</p>
${row.detail.diffStat ? `<pre>${e(row.detail.diffStat.trimEnd())}</pre>` : ""}
${row.detail.summary ? `<p><b>The agent says</b> (a claim): ${e(row.detail.summary)}</p>` : ""}
${(row.detail.deviations ?? []).length ? `<ul>${(row.detail.deviations ?? []).map((d) => `<li>deviation from “${e(d.from_packet)}”: ${e(d.reason)}</li>`).join("")}</ul>` : ""}
<table><tr><th>invariant</th><th>ruling</th><th>evidence</th></tr>${row.rulings
        .map((ruling) => {
          const snippet = ruling.evidence ? row.detail.snippets[ruling.evidence] : undefined;
          return `<tr><td>${e(ruling.id)}</td><td class="${e(ruling.status)}">${e(ruling.status)}</td><td>${ruling.evidence ? `<code>${e(ruling.evidence)}</code>` : ""}${snippet !== undefined ? `<pre>${e(snippet.trim())}</pre>` : ""}</td></tr>`;
        })
        .join("")}</table>
${row.findings.length ? `<ul>${row.findings.map((f) => `<li>${e(f.severity)}${f.where ? ` <code>${e(f.where)}</code>` : ""}: ${e(f.claim)}</li>`).join("")}</ul>` : ""}
<pre class=cmd>factory diff ${e(row.id)}
factory approve ${e(row.id)}
factory reject ${e(row.id)} --reason "…"</pre></article>`,
    )
    .join("");
  const blocked = `<ul>${report.blocked
    .map(
      (
        row,
      ) => `<li><b>${e(row.id)}</b> ${e(row.goal)}<br>${e(row.reason)}${row.fingerprint ? ` <code>${e(row.fingerprint)}</code>` : ""}${row.evidence.length ? `<ul class=evidence>${row.evidence.map((line) => `<li><code>${e(line)}</code></li>`).join("")}</ul>` : ""}<pre class=cmd>factory show ${e(row.id)}
${e(row.next)}</pre>${row.waiting.length ? `<p>Waiting behind it: ${row.waiting.map((waiting) => `<b>${e(waiting.id)}</b> ${e(waiting.goal)}`).join(", ")}</p>` : ""}</li>`,
    )
    .join("")}</ul>`;
  const notAttempted = `<ul>${report.notAttempted.map((row) => `<li><b>${e(row.id)}</b> ${e(row.why)}</li>`).join("")}</ul>`;
  const assessed = `<ul>${report.assessed
    .map(
      (row) =>
        `<li><b>${e(row.id)}</b> <span class="${row.ruling === "ready" ? "held" : "violated"}">${e(row.ruling)}</span> (tier ${e(row.tier)})${row.current ? "" : " — on an older version of the packet"} ${e(row.goal)}${row.findings.length ? `<ul>${row.findings.map((f) => `<li>${e(f.claim)}${f.where ? ` <code>${e(f.where)}</code>` : ""}${f.quote ? ` — spec: “${e(f.quote)}”` : ""}</li>`).join("")}</ul>` : ""}</li>`,
    )
    .join("")}</ul>`;
  const spend = `<p>$${report.totalUsd.toFixed(2)}${report.capUsd !== undefined ? ` of a $${report.capUsd.toFixed(2)} cap` : ""}</p><ul>${report.spend.map((s) => `<li>${e(s.role)}: $${s.usd.toFixed(2)} (${s.calls} calls)</li>`).join("")}${report.otherSpend.map((s) => `<li>${e(s.for)}: $${s.usd.toFixed(2)}</li>`).join("")}</ul>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>factory: morning brief</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.4rem;overflow:auto}.violated,.unverifiable{color:#b00}.held{color:#070}.none{color:#777}</style>
</head><body>
<h1>Morning brief</h1>
<p>${e(report.since)} to ${e(report.until)}${report.run ? `, run <code>${e(report.run.id)}</code>${report.run.outcome ? ` (${e(report.run.outcome)}${report.run.reason ? `: ${e(report.run.reason)}` : ""})` : ""}` : ""}</p>
${section("Merged", report.merged.length, merged)}
${section("Held for you", report.held.length, held)}
${report.questions.length ? section("Questions for you", report.questions.length, questions) : ""}
${section("Blocked", report.blocked.length, blocked)}
${section("Not attempted", report.notAttempted.length, notAttempted)}
${report.flaky.length ? section("Flaky tests", report.flaky.length, `<ul>${report.flaky.map((row) => `<li>${e(flakyText(row))}</li>`).join("")}</ul>`) : ""}
${report.assessed.length ? section("Assessed", report.assessed.length, assessed) : ""}
<section><h2>Spend</h2>${spend}</section>
</body></html>
`;
}

function minutes(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "0s";
  return ms < 60_000 ? `${Math.round(ms / 1000)}s` : `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char);
}

/** A merged packet's attempts: those counted, and its newest attempt's number where some were not counted. */
function attemptsFields(record: Pick<PacketHistory, "attemptsUsed" | "lastAttempt"> | undefined): { attempts: number; lastAttempt?: number } {
  const attempts = record?.attemptsUsed ?? 0;
  return record && record.lastAttempt > attempts ? { attempts, lastAttempt: record.lastAttempt } : { attempts };
}

/** Pure: how the brief says a merged packet's attempts (the newest's number as progress lines named it, where it differs). */
function attemptsOf(row: { attempts: number; lastAttempt?: number }): string {
  return `${row.attempts} attempt(s)${row.lastAttempt ? ` (the newest #${row.lastAttempt})` : ""}`;
}
