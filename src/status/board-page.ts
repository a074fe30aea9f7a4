import type { LedgerEvent } from "../ledger/events.js";
import type { WorkerRow } from "../ledger/pg-workers.js";
import { attemptsText } from "./attempts-text.js";
import type { Board } from "./board.js";
import { escapeHtml as e } from "./report.js";

/** One packet on the live board: its row of `factory status` and, while it runs, the step in flight. */
export interface LiveRow {
  id: string;
  goal: string;
  state: string;
  /** Its attempts as status says them (attemptsText): counted of allowed, and the newest's number where it differs. */
  attempts: string;
  costUsd: number;
  /** While running: since when, and the step the ledger last recorded. */
  since?: string;
  step?: string;
  reason: string;
}

/** Pure: the step a running packet is in, from the kind of its last ledger event. */
export function stepAfter(event: LedgerEvent): string | undefined {
  switch (event.kind) {
    case "claimed":
    case "baseline-measured":
    case "planted":
    case "continued":
      return "implementing";
    case "agent-finished":
      return event.role === "implementer" ? "gates" : "review";
    case "gate-finished":
    case "outside-change-seen":
      return "gates";
    case "review-recorded":
      return "landing";
    default:
      return undefined;
  }
}

/**
 * Pure: the step a line of the run's progress log puts a packet's attempt in
 * (finer than the ledger's: the worktree, the baseline, planting, the
 * commit, a re-gate), or undefined for a line that says nothing of one.
 */
export function progressStep(event: unknown): { packet: string; attempt: number; step: string } | undefined {
  if (typeof event !== "object" || event === null) return undefined;
  const { kind, packet, attempt, step, role } = event as Record<string, unknown>;
  if (typeof packet !== "string" || typeof attempt !== "number") return undefined;
  const at = (label: string) => ({ packet, attempt, step: label });
  if (kind === "gate") return at("gates");
  if (kind === "agent") return at(role === "implementer" ? "gates" : "landing");
  if (kind !== "step" || typeof step !== "string") return undefined;
  if (step.startsWith("implementer")) return at("implementing");
  if (step.startsWith("reviewer") || step === "review") return at("review");
  if (step.startsWith("auto-fix")) return at("gates");
  const labels: Record<string, string> = {
    worktree: "worktree",
    baseline: "baseline",
    planted: "planting",
    continues: "implementing",
    commit: "committing",
    gates: "gates",
    "re-gate": "re-gate",
    batched: "landing",
  };
  const label = labels[step];
  return label ? at(label) : undefined;
}

/** Pure: the board's rows, with the steps in flight. */
export function liveRows(board: Board, steps: ReadonlyMap<string, string>, running: ReadonlyMap<string, { attempt: number; since: string }>): LiveRow[] {
  return board.packets.map((row) => {
    const run = row.state === "running" ? running.get(row.id) : undefined;
    // A running packet shows the step in flight as its state: that is what a person watches.
    const state = run ? (steps.get(row.id) ?? "implementing") : row.state;
    return {
      id: row.id,
      goal: row.goal ?? "",
      state,
      attempts: attemptsText(row.attempts_used, row.max_attempts, row.last_attempt),
      costUsd: row.cost_usd,
      ...(run ? { since: run.since, step: state } : {}),
      // A question waiting for a person is what the row is about: the implementer's words, then the command.
      reason: row.question
        ? `asks: ${row.question.text}${row.question.suggestions.length ? ` (suggested: ${row.question.suggestions.join(" | ")})` : ""} — factory answer ${row.id} "…"`
        : (row.reason ?? ""),
    };
  });
}

/** Pure: the rows of the board's table (what the live stream replaces); an alarm (the ledger's chain breaks) first, across the table. */
export function boardRowsHtml(rows: readonly LiveRow[], alarm?: string, spentUsd?: number): string {
  const first = alarm ? `<tr id=alarm><td colspan=7 class=alarm>${e(alarm)}</td></tr>` : "";
  // The ledger's whole spend, as status says it (checks and probes besides the packets' calls): the header shows it.
  const total = spentUsd === undefined ? "" : `<tr id=spent-total hidden data-usd="${spentUsd.toFixed(2)}"></tr>`;
  return (
    first +
    total +
    rows
      .map(
        (row) =>
          `<tr id="${e(row.id)}" data-state="${e(row.step ? "running" : row.state)}"><td><a href="/packet/${encodeURIComponent(row.id)}">${e(row.id)}</a></td><td class="state ${e(row.state)}">${e(row.state)}</td><td class=attempts>${e(row.attempts)}</td><td class=spend>$${row.costUsd.toFixed(2)}</td><td class=elapsed${row.since ? ` data-since="${e(row.since)}"` : ""}></td><td>${e(row.goal)}</td><td class=reason>${e(row.reason)}</td></tr>`,
      )
      .join("")
  );
}

/** Pure: the rows of the workers' table (PostgreSQL ledger): a worker past its lease is stale, never alive. */
export function workersHtml(workers: readonly WorkerRow[]): string {
  if (workers.length === 0) return `<tr><td colspan=5>no worker has run on this ledger yet: <code>factory run --worker NAME</code> on each machine</td></tr>`;
  return workers
    .map(
      (worker) =>
        `<tr id="worker-${e(worker.name)}"><td>${e(worker.name)}</td><td class="state ${e(worker.state)}">${e(worker.state)}</td><td>${e(worker.host)} pid ${worker.pid}</td><td>${e(worker.holds.map((hold) => `${hold.packet}#${hold.attempt} (fence ${hold.fence})`).join(", ") || "-")}</td><td data-time="${e(worker.last_heartbeat)}">${e(shortTime(worker.last_heartbeat))}</td></tr>`,
    )
    .join("");
}

const STYLE =
  "body{font:15px/1.45 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.5rem;overflow:auto}#history,pre.cmd{white-space:pre-wrap;overflow-wrap:anywhere}h1,p,td{overflow-wrap:anywhere}.merged{color:#070}.alive{color:#070}.stale{color:#b00;font-weight:bold}.ended{color:#777}.blocked{color:#b00}.awaiting_human,.awaiting_answer{color:#a60}.reason{color:#555;font-size:90%}.alarm{background:#fee;color:#b00;font-weight:bold}.add{color:#070}.del{color:#b00}.hunk{color:#06c}#counts{font-weight:bold}";

/** The page's only script: the rows from the server's stream, and the running packets' elapsed time. */
const SCRIPT = `(function(){
var local=function(){document.querySelectorAll("[data-time]").forEach(function(el){var t=new Date(el.dataset.time);if(!isNaN(t))el.textContent=t.toLocaleString(undefined,{dateStyle:"medium",timeStyle:"medium"});});};
var counts=function(){var c={},spend=0;document.querySelectorAll("#rows tr[id]").forEach(function(tr){var st=tr.querySelector(".state");if(st){var k=tr.dataset.state||st.textContent;c[k]=(c[k]||0)+1;}var sp=tr.querySelector(".spend");if(sp)spend+=parseFloat(sp.textContent.replace("$",""))||0;});var el=document.getElementById("counts");if(el)el.textContent=Object.keys(c).sort().map(function(k){return c[k]+" "+k;}).join(" · ")||"no packet";var total=document.getElementById("spent-total");if(total)spend=parseFloat(total.dataset.usd)||0;var sp=document.getElementById("spent");if(sp)sp.textContent="$"+spend.toFixed(2);};
var tick=function(){document.querySelectorAll("td.elapsed[data-since]").forEach(function(td){var s=Math.max(0,Math.round((Date.now()-Date.parse(td.dataset.since))/1000));td.textContent=s<60?s+"s":Math.floor(s/60)+"m"+String(s%60).padStart(2,"0")+"s";});};
var events=new EventSource("/events");
events.onmessage=function(message){document.getElementById("rows").innerHTML=JSON.parse(message.data);tick();counts();};
events.addEventListener("workers",function(message){var t=document.getElementById("workers");if(t)t.innerHTML=JSON.parse(message.data);local();});
events.addEventListener("ended",function(){document.getElementById("live").textContent="the board server stopped";events.close();});
setInterval(tick,1000);tick();counts();local();
})();`;

/** Pure: the whole board page; without JavaScript it is the board as of the request. */
export function boardPage(input: {
  branch: string;
  rows: readonly LiveRow[];
  root: string;
  workers?: readonly WorkerRow[];
  alarm?: string;
  /** `[limits] max_cost_usd`, when the config caps a run's spend. */
  capUsd?: number;
  /** The newest run: going since, or when it ended and how. */
  run?: { startedAt: string; ended?: { at: string; outcome: string } };
  /** The ledger's whole spend (status's figure); without it, the rows' sum. */
  spentUsd?: number;
}): string {
  const spent = input.spentUsd ?? input.rows.reduce((sum, row) => sum + row.costUsd, 0);
  const run = input.run
    ? input.run.ended
      ? `the last run ${e(input.run.ended.outcome)} <span data-time="${e(input.run.ended.at)}">${e(shortTime(input.run.ended.at))}</span>`
      : `a run is going, since <span data-time="${e(input.run.startedAt)}">${e(shortTime(input.run.startedAt))}</span>`
    : "no run yet";
  return page(
    `factory board: ${input.root}`,
    `<h1>factory board</h1>
<p>${e(input.root)} · target <code>${e(input.branch)}</code> · <span id=live>live</span></p>
<p id=summary><span id=counts>${e(countsLine(input.rows))}</span> · spent <span id=spent>$${spent.toFixed(2)}</span>${input.capUsd !== undefined ? ` of a $${input.capUsd.toFixed(2)} cap per run` : ""} · <span id=run>${run}</span></p>
<table><thead><tr><th>packet</th><th>state</th><th>attempts</th><th>spend</th><th>elapsed</th><th>goal</th><th>why</th></tr></thead><tbody id=rows>${boardRowsHtml(input.rows, input.alarm, input.spentUsd)}</tbody></table>
${input.workers ? `<h2>Workers</h2>\n<table><thead><tr><th>worker</th><th>state</th><th>where</th><th>holds</th><th>last heartbeat</th></tr></thead><tbody id=workers>${workersHtml(input.workers)}</tbody></table>\n` : ""}<script>${SCRIPT}</script>`,
  );
}

/** Pure: one packet's page: its history as `factory show` tells it, its diff, and the commands to run next. */
export function packetPage(input: { id: string; goal: string; state: string; history: readonly string[]; diff: string | undefined; next: readonly string[] }): string {
  return page(
    `factory: ${input.id}`,
    `<p><a href="/">← the board</a></p>
<h1>${e(input.id)}: ${e(input.goal)}</h1>
<p class="state ${e(input.state)}">${e(input.state)}</p>
${input.next.length ? `<h2>Next</h2><pre class=cmd>${input.next.map(e).join("\n")}</pre>` : ""}
<h2>History</h2><pre id=history>${e(input.history.join("\n"))}</pre>
<h2>Diff</h2>${input.diff ? `<pre id=diff>${diffHtml(input.diff)}</pre>` : "<p>no gated attempt yet</p>"}`,
  );
}

/** Pure: "2 merged · 1 queued" from the rows (a running packet counts as running, whatever step it is in). */
export function countsLine(rows: readonly LiveRow[]): string {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.step ? "running" : row.state, (counts.get(row.step ? "running" : row.state) ?? 0) + 1);
  return (
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([state, count]) => `${count} ${state}`)
      .join(" · ") || "no packet"
  );
}

/** Pure: an ISO time without its milliseconds, as the page shows it before its script writes the reader's local time. */
export function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z").replace("T", " ");
}

/** Pure: a unified diff as HTML, added lines green, removed red, hunk headers blue. */
export function diffHtml(diff: string): string {
  return diff
    .split("\n")
    .map((line) => {
      const kind = line.startsWith("+++") || line.startsWith("---") ? "" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
      return kind ? `<span class=${kind}>${e(line)}</span>` : e(line);
    })
    .join("\n");
}

function page(title: string, body: string): string {
  // The icon is the page's own (an empty data URL): the browser asks the server for no /favicon.ico.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title><link rel="icon" href="data:,"><style>${STYLE}</style></head><body>
${body}
</body></html>
`;
}

/** What the server allows a page to load: itself and nothing else. */
export const BOARD_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:";
