import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadWorkspace } from "../../src/commands/workspace.js";
import { foldLedger } from "../../src/ledger/fold.js";
import { answerId } from "../../src/merge/message.js";
import { buildBoard } from "../../src/status/board.js";
import { boardRowsHtml, liveRows } from "../../src/status/board-page.js";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Issue 41 §1: an implementer may end with one question for a person. The factory records it, spends no
 * attempt, holds the packet at awaiting_answer, goes on with the rest of the queue, and shows the question
 * where a person looks; `factory answer` (a person's command) queues the packet again, the next brief carries
 * the question and the answer, and the landing commit names the answer.
 */
const setUp = useLoopRepos(afterEach);
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const QUESTION = "The spec says 'double things' but not whether double() must accept numeric strings like \"21\". Should it?";
const asks = { result: { status: "question", summary: "Stopped: the spec is ambiguous.", question: QUESTION, suggested_answers: ["No: numbers only", "Yes: parse them first"] } };
const honest = { write: { "src/double.js": DOUBLE_JS } };

/** P02, independent of P01: the queue goes on while P01 waits for its answer. */
function addP02(target: LoopRepo): void {
  target.write(
    "packets/P02-triple.toml",
    `id = "P02"\ngoal = "Add triple"\nspec_commit = "${target.spec}"\nspec_path = "docs/SPEC.md"\nallowed_paths = ["src/triple.js"]\nbrief = '''\nAdd src/triple.js exporting triple(n).\n'''\n\n[[invariants]]\nid = "triples"\nassert = "triple(n) is n * 3"\n`,
  );
  target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 2, 6));
  target.commit("P02");
}

describe("an implementer asks one question", () => {
  it("is recorded with no attempt spent; the queue goes on; status, the run's end and the board show it; a person's answer reaches the next brief and the landing commit's trailers", async () => {
    // A local webhook: the question reaches it.
    const bodies: Record<string, unknown>[] = [];
    const hook = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk) => (text += String(chunk)));
      request.on("end", () => {
        bodies.push(JSON.parse(text) as Record<string, unknown>);
        response.end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    servers.push(hook);
    const webhook = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const target = setUp({
      config: `\n[notify]\nwebhook = "${webhook}"\ndesktop = false\n`,
      script: { P01: { implementer: [asks, honest] }, P02: { implementer: [{ write: { "src/triple.js": "export function triple(n) {\n  return n * 3;\n}\n" } }] } },
    });
    addP02(target);
    const first = await target.run();
    expect(bodies.find((body) => body.event === "question")).toMatchObject({
      packet: "P01",
      question: QUESTION,
      suggestions: ["No: numbers only", "Yes: parse them first"],
      answer: 'factory answer P01 "…"',
    });
    // The board's row says the question and the command.
    const loaded = await loadWorkspace(target.dir);
    if (!loaded.ok) throw new Error("the workspace does not load");
    const board = buildBoard({
      branch: "main",
      tip: loaded.workspace.tip,
      packets: loaded.workspace.queue.packets,
      invalid: new Map(),
      ledger: foldLedger(await target.events()),
      problems: [],
      warnings: [],
    });
    const rows = liveRows(board, new Map(), new Map());
    expect(boardRowsHtml(rows)).toContain(
      `asks: ${QUESTION.replaceAll('"', "&quot;").replaceAll("'", "&#39;")} (suggested: No: numbers only | Yes: parse them first) — factory answer P01 &quot;…&quot;`,
    );
    expect(first.out).toContain(`P01 asks (the implementer's words): ${QUESTION}`);
    expect(first.out).toContain('  1. No: numbers only\n  2. Yes: parse them first\n  answer: factory answer P01 "…"  (or --file F); no attempt is spent on a question');
    const record = await target.record("P01");
    expect(record?.status).toMatchObject({ state: "awaiting_answer", attempt: 1, question: QUESTION, suggestions: ["No: numbers only", "Yes: parse them first"] });
    expect(record?.attemptsUsed).toBe(0);
    expect((await target.record("P02"))?.status.state).toBe("merged"); // the rest of the queue went on
    expect((await target.events("P01")).filter((event) => event.kind === "gate-finished")).toEqual([]); // nothing judged on a question

    const shown = runCli(["status"], target.dir);
    expect(shown.stdout).toMatch(/P01\s+awaiting_answer/);
    expect(shown.stdout).toContain(`P01 asks (the implementer's words): ${QUESTION}`);
    const row = (JSON.parse(runCli(["status", "--json"], target.dir).stdout) as { packets: { id: string; state: string; question?: unknown }[] }).packets.find((packet) => packet.id === "P01");
    expect(row).toMatchObject({ state: "awaiting_answer", question: { text: QUESTION, suggestions: ["No: numbers only", "Yes: parse them first"] } });
    // The morning brief lists it for the person.
    const brief = runCli(["report"], target.dir);
    expect(brief.stdout).toContain("Questions for you (1)");
    expect(brief.stdout).toContain(`P01 asks (the implementer's words): ${QUESTION}`);

    // Only a person answers: an agent's variables, no terminal without --yes, an empty answer, both text and a file.
    const byAgent = runCli(["answer", "P01", "numbers only", "--yes"], target.dir, { CLAUDECODE: "1" });
    expect(byAgent.code).toBe(2);
    expect(byAgent.stderr).toContain("factory answer refused: it is run by an agent process (CLAUDECODE set)");
    const piped = runCli(["answer", "P01", "numbers only"], target.dir);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("factory answer needs a person: run it in a terminal and type P01, or pass --yes");
    expect(runCli(["answer", "P01", "   ", "--yes"], target.dir).stderr).toContain("factory answer: the answer is empty");
    target.write("answer.md", "numbers only\n");
    expect(runCli(["answer", "P01", "x", "--file", "answer.md", "--yes"], target.dir).stderr).toContain("give the answer as text or with --file, not both");
    const notAsking = runCli(["answer", "P02", "x", "--yes"], target.dir);
    expect(notAsking.code).toBe(2);
    expect(notAsking.stderr).toContain("P02 is merged, not awaiting_answer");
    expect((await target.record("P01"))?.status.state).toBe("awaiting_answer");

    const answered = runCli(["answer", "P01", "--file", "answer.md", "--yes"], target.dir);
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toContain(`P01 asks: ${QUESTION}`);
    expect((await target.record("P01"))?.status.state).toBe("queued");
    const by = target.git("config", "user.name").trim();

    const second = await target.run();
    expect(second.code, second.out).toBe(0);
    const prompt = target.read(".factory/runs/P01/attempt-2/implementer-prompt.md");
    expect(prompt).toContain(`## Your questions, answered by a person\n\nQuestion: ${QUESTION}\nAnswer (${by}): numbers only`);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
    const history = runCli(["show", "P01"], target.dir).stdout;
    expect(history).toContain(`asked a person (the implementer's words): ${QUESTION}`);
    expect(history).toMatch(new RegExp(`answered by ${by} \\S+ \\(Factory-Answer ${answerId("numbers only")}\\): numbers only`));
    const message = target.git("log", "-1", "--format=%B", "main");
    expect(message).toMatch(new RegExp(`Factory-Answer: ${answerId("numbers only")} by ${by} at \\d{4}-\\d\\d-\\d\\dT`));
  }, 120_000);

  it("past [limits] max_questions a question is a failed attempt, its question the feedback; a packet with questions left is never charged for one", async () => {
    const target = setUp({ config: "max_questions = 1", script: { P01: { implementer: [asks, asks, honest] } } });
    await target.run();
    expect((await target.record("P01"))?.status.state).toBe("awaiting_answer");
    expect(runCli(["answer", "P01", "numbers only", "--yes"], target.dir).code).toBe(0);
    await target.run();
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "asked")).toHaveLength(1);
    const decided = events.filter((event) => event.kind === "decided");
    expect(decided[0]).toMatchObject({ attempt: 2, decision: "retry" });
    expect(JSON.stringify(decided[0])).toContain("the implementer asked another question, past max_questions");
    expect(target.read(".factory/runs/P01/attempt-3/implementer-prompt.md")).toContain("No more questions can be asked for this packet");
    const record = await target.record("P01");
    expect(record?.status.state).toBe("merged");
    expect(record?.attemptsUsed).toBe(2); // the question past the limit was spent; the first was not
  }, 120_000);
});
