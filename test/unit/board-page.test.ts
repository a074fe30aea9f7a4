import { describe, expect, it } from "vitest";
import { stamp } from "../../src/ledger/events.js";
import type { Board, BoardRow } from "../../src/status/board.js";
import { boardPage, boardRowsHtml, countsLine, diffHtml, liveRows, progressStep, shortTime, stepAfter, workersHtml } from "../../src/status/board-page.js";

const row = (id: string, state: BoardRow["state"], goal = "g", attempts = { used: 1, last: 1 }): BoardRow => ({
  id,
  file: `packets/${id}.toml`,
  goal,
  state,
  attempts_used: attempts.used,
  last_attempt: attempts.last,
  max_attempts: 3,
  cost_usd: 0.5,
  gate: "auto",
  requires: [],
  reason: null,
  sha256: "s",
  note: null,
  commit: null,
});
const board = (rows: BoardRow[]): Board => ({ schema: 1, branch: "main", tip: "t", cost_usd: 1, counts: {} as Board["counts"], packets: rows, problems: [], warnings: [] });

describe("the board page", () => {
  it("names the step in flight from a running packet's last event", () => {
    expect(stepAfter(stamp({ kind: "planted", packet: "A", attempt: 1, commit: "c", files: [] }))).toBe("implementing");
    expect(stepAfter(stamp({ kind: "agent-finished", packet: "A", attempt: 1, role: "implementer", outcome: "ok", durationMs: 1 }))).toBe("gates");
    expect(stepAfter(stamp({ kind: "agent-finished", packet: "A", attempt: 1, role: "reviewer", outcome: "ok", durationMs: 1 }))).toBe("review");
    expect(stepAfter(stamp({ kind: "review-recorded", packet: "A", attempt: 1, verdict: "accept", effective: "accept", overrides: [], held: 1, violated: 0, unverifiable: 0 }))).toBe("landing");
    expect(stepAfter(stamp({ kind: "merged", packet: "A", attempt: 1, commit: "c", tree: "t" }))).toBeUndefined();
    // A's second attempt runs; B merged at its fourth, its first interrupted and its second asked a question (not counted).
    const rows = liveRows(
      board([row("A", "running", "g", { used: 2, last: 2 }), row("B", "merged", "g", { used: 2, last: 4 })]),
      new Map([
        ["A", "gates"],
        ["B", "gates"],
      ]),
      new Map([["A", { attempt: 2, since: "2026-12-02T03:00:00Z" }]]),
    );
    expect(rows.map((live) => [live.id, live.state, live.attempts, live.since])).toEqual([
      ["A", "gates", "2/3", "2026-12-02T03:00:00Z"],
      ["B", "merged", "2/3 (#4)", undefined],
    ]);
  });

  it("escapes what packets and agents wrote", () => {
    const html = boardRowsHtml(liveRows(board([row("A", "blocked", "<script>alert(1)</script>")]), new Map(), new Map()));
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>");
    expect(boardPage({ branch: "main", root: "/r", rows: [] }).match(/<script>/g)).toHaveLength(1); // its own, inline
  });

  it("shows the workers only on a database ledger, a stale one as stale, names escaped", () => {
    expect(boardPage({ branch: "main", root: "/r", rows: [] })).not.toContain("Workers");
    const worker = { name: "<b>w1</b>", host: "h", pid: 7, state: "stale" as const, holds: [{ packet: "P01", attempt: 2, fence: 9 }], last_heartbeat: "t", lease_until: "t" };
    const html = workersHtml([worker]);
    expect(html).toContain('<td class="state stale">stale</td>');
    expect(html).toContain("P01#2 (fence 9)");
    expect(html).not.toContain("<b>");
    expect(boardPage({ branch: "main", root: "/r", rows: [], workers: [] })).toContain("no worker has run on this ledger yet");
  });
});

describe("the step a progress line puts an attempt in", () => {
  it("reads the run's step, gate and agent lines, finer than the ledger", () => {
    const at = (event: object) => progressStep({ packet: "P01", attempt: 2, ...event })?.step;
    expect(at({ kind: "step", step: "worktree" })).toBe("worktree");
    expect(at({ kind: "step", step: "baseline" })).toBe("baseline");
    expect(at({ kind: "step", step: "implementer", detail: "claude m" })).toBe("implementing");
    expect(at({ kind: "step", step: "commit" })).toBe("committing");
    expect(at({ kind: "gate", gate: "pytest" })).toBe("gates");
    expect(at({ kind: "step", step: "re-gate" })).toBe("re-gate");
    expect(at({ kind: "agent", role: "reviewer" })).toBe("landing");
    expect(at({ kind: "notice", message: "x" })).toBeUndefined();
    expect(progressStep({ kind: "step", step: "baseline" })).toBeUndefined(); // no packet
    expect(progressStep("not an event")).toBeUndefined();
  });

  it("heads the page with the counts, the spend against the cap and the last run; colours a diff; shows times without milliseconds", () => {
    const rows = [
      { id: "A", goal: "", state: "merged", attempts: "1/3", costUsd: 0.5, reason: "" },
      { id: "B", goal: "", state: "implementing", attempts: "1/3", costUsd: 0.25, reason: "", since: "2026-12-06T01:00:00.000Z", step: "implementing" },
      { id: "C", goal: "", state: "merged", attempts: "2/3", costUsd: 1, reason: "" },
    ];
    expect(countsLine(rows)).toBe("2 merged · 1 running");
    const page = boardPage({ branch: "main", root: "/r", rows, capUsd: 25, run: { startedAt: "2026-12-06T01:00:00.123Z", ended: { at: "2026-12-06T05:30:00.456Z", outcome: "drained" } } });
    expect(page).toContain("<span id=counts>2 merged · 1 running</span> · spent <span id=spent>$1.75</span> of a $25.00 cap per run");
    // The ledger's whole spend, as status says it (a preflight probe besides the packets' calls), heads the page and the live rows.
    const whole = boardPage({ branch: "main", root: "/r", rows, spentUsd: 1.9 });
    expect(whole).toContain("spent <span id=spent>$1.90</span>");
    expect(whole).toContain('<tr id=spent-total hidden data-usd="1.90"></tr>');
    expect(page).toContain('the last run drained <span data-time="2026-12-06T05:30:00.456Z">2026-12-06 05:30:00Z</span>');
    expect(page).toContain('<link rel="icon" href="data:,">');
    expect(boardPage({ branch: "main", root: "/r", rows: [] })).toContain("<span id=run>no run yet</span>");
    expect(shortTime("2026-12-06T05:30:00.456Z")).toBe("2026-12-06 05:30:00Z");
    expect(diffHtml("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old <b>\n+new\n same")).toBe(
      "--- a/x\n+++ b/x\n<span class=hunk>@@ -1 +1 @@</span>\n<span class=del>-old &lt;b&gt;</span>\n<span class=add>+new</span>\n same",
    );
  });
});
