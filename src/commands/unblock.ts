import type { Output } from "../log/output.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, loadPacketRecord, type PersonInput, personName, refuseAgents } from "./packet-record.js";

export interface UnblockOptions extends PersonInput {
  cwd: string;
  id: string;
  attempts: number;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/** Gives a blocked packet more attempts, keeping its history. */
export async function unblock(options: UnblockOptions): Promise<ExitCode> {
  const { output, id } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory unblock refused: ${refusal}.`);
    return EXIT.invalid;
  }
  if (!Number.isInteger(options.attempts) || options.attempts < 1 || options.attempts > 10) {
    output.err(`--attempts must be a whole number from 1 to 10, not ${options.attempts}`);
    return EXIT.invalid;
  }
  const loaded = await loadPacketRecord(options.cwd, id, output);
  if (!loaded) return EXIT.invalid;
  const state = loaded.record?.status.state ?? "queued";
  if (state !== "blocked") {
    output.err(`${id} is ${state}, not blocked`);
    return EXIT.invalid;
  }
  if (!(await confirmByPerson("unblock", id, "give it more attempts", options, output))) return EXIT.invalid;
  const root = loaded.workspace.root;
  const by = await personName(root);
  await loaded.workspace.ledger.append([{ kind: "unblocked", packet: id, extraAttempts: options.attempts, by }]);
  output.out(`${id} has ${options.attempts} more attempt(s); the next \`factory run\` picks it up.`);
  return EXIT.ok;
}
