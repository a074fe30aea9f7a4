import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { stamp } from "../ledger/events.js";
import { whileUnclaimed } from "../loop/claim.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";

export interface AnswerOptions extends PersonCommand {
  /** The answer as typed on the command line, or undefined when it comes from `file`. */
  text: string | undefined;
  file: string | undefined;
}

/** An answer is text in the next brief: a few paragraphs at most. */
export const MAX_ANSWER_CHARS = 8000;

/**
 * A person answers a packet's open question. The answer is bound to the
 * packet's version (a changed packet file has no open question) and queues
 * the packet again; the next attempt's brief carries the question and the
 * answer, and the landing commit names the answer in a trailer.
 */
export async function answer(options: AnswerOptions): Promise<ExitCode> {
  const { output, id } = options;
  const text = readAnswer(options);
  const start = await personPreamble("answer", options, {
    args: () => (text.ok ? undefined : `factory answer: ${text.problem}; nothing was recorded.`),
    state: ({ packet, record }) => {
      const state = record?.status.state ?? "queued";
      if (state !== "awaiting_answer") return `${id} is ${state}, not awaiting_answer; only a packet whose implementer asked a question can be answered`;
      if (!packet || packet.sha256 !== record?.sha256)
        return `${id}: the packet file changed since its implementer asked; the question was about the old version and the next run starts the new one over. Nothing was recorded.`;
      return undefined;
    },
  });
  if (!start.ok || !text.ok) return start.ok ? EXIT.invalid : start.code;
  const { loaded } = start;
  const status = loaded.record?.status;
  const sha256 = loaded.record?.sha256;
  if (status?.state !== "awaiting_answer" || sha256 === undefined) return EXIT.invalid; // checked above
  output.out(`${id} asks: ${status.question}`);
  if (!(await confirmByPerson("answer", id, "record your answer", options, output))) return EXIT.invalid;
  const by = await personName(loaded.workspace.root);
  const refused = await whileUnclaimed(loaded.workspace.ledger, id, async (tx) => {
    const now = (await tx.read()).state.packets.get(id);
    if (now?.status.state !== "awaiting_answer" || now.status.attempt !== status.attempt || now.sha256 !== sha256) return now?.status.state ?? "queued";
    await tx.append([stamp({ kind: "answered", packet: id, sha256, attempt: status.attempt, by, answer: text.answer })]);
    return undefined;
  });
  if (refused) {
    output.err(`${id} is ${refused} now, no longer the question you saw; nothing was recorded.`);
    return EXIT.invalid;
  }
  output.out(`${id} answered by ${by}. The next \`factory run\` gives the implementer your answer with its question (no attempt was spent on the question).`);
  return EXIT.ok;
}

function readAnswer(options: Pick<AnswerOptions, "text" | "file" | "cwd">): { ok: true; answer: string } | { ok: false; problem: string } {
  if (options.text !== undefined && options.file !== undefined) return { ok: false, problem: "give the answer as text or with --file, not both" };
  let raw = options.text;
  if (options.file !== undefined) {
    try {
      raw = readFileSync(resolve(options.cwd, options.file), "utf8");
    } catch (error) {
      return { ok: false, problem: `${options.file} cannot be read (${error instanceof Error ? error.message : String(error)})` };
    }
  }
  const answer = raw?.trim() ?? "";
  if (answer === "") return { ok: false, problem: `the answer is empty${options.file !== undefined ? ` (${options.file})` : ""}: write it as text, or with --file F` };
  if (answer.length > MAX_ANSWER_CHARS)
    return { ok: false, problem: `the answer${options.file !== undefined ? ` in ${options.file}` : ""} is ${answer.length} characters; keep it under ${MAX_ANSWER_CHARS}` };
  return { ok: true, answer };
}
