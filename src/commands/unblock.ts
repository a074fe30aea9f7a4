import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";

export interface UnblockOptions extends PersonCommand {
  attempts: number;
}

/** Gives a blocked packet more attempts, keeping its history. */
export async function unblock(options: UnblockOptions): Promise<ExitCode> {
  const { output, id } = options;
  const start = await personPreamble("unblock", options, {
    args: () => (!Number.isInteger(options.attempts) || options.attempts < 1 || options.attempts > 10 ? `--attempts must be a whole number from 1 to 10, not ${options.attempts}` : undefined),
    state: ({ record }) => {
      const state = record?.status.state ?? "queued";
      return state === "blocked" ? undefined : `${id} is ${state}, not blocked`;
    },
  });
  if (!start.ok) return start.code;
  const { loaded } = start;
  if (!(await confirmByPerson("unblock", id, "give it more attempts", options, output))) return EXIT.invalid;
  const root = loaded.workspace.root;
  const by = await personName(root);
  await loaded.workspace.ledger.append([{ kind: "unblocked", packet: id, extraAttempts: options.attempts, by }]);
  output.out(`${id} has ${options.attempts} more attempt(s); the next \`factory run\` picks it up.`);
  return EXIT.ok;
}
