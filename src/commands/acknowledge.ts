import { goneLandings } from "../loop/gone-landings.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";

export type AcknowledgeOptions = PersonCommand;

/**
 * A person says a merged packet's landing is gone from the target on purpose
 * (a revert they meant, a history they rewrote): it stays merged in the
 * ledger, is no longer warned about, and what requires it may run again.
 * Only a landing the target really no longer has can be acknowledged.
 */
export async function acknowledge(options: AcknowledgeOptions): Promise<ExitCode> {
  const { output, id } = options;
  let gone: { commit: string } | undefined;
  const start = await personPreamble("acknowledge", options, {
    state: async ({ workspace, record }) => {
      gone = (await goneLandings(workspace.root, workspace.tip, workspace.branch, (await workspace.ledger.read()).state)).find((landing) => landing.packet === id);
      if (gone) return undefined;
      const state = record?.status.state ?? "queued";
      return state === "merged" ? `${id}'s landing is on ${workspace.branch}; there is nothing to acknowledge` : `${id} is ${state}, not merged; there is nothing to acknowledge`;
    },
  });
  if (!start.ok || !gone) return start.ok ? EXIT.invalid : start.code;
  const { workspace } = start.loaded;
  if (!(await confirmByPerson("acknowledge", id, `accept that its landing ${gone.commit.slice(0, 10)} is gone from ${workspace.branch}`, options, output))) return EXIT.invalid;
  const by = await personName(workspace.root);
  await workspace.ledger.append([{ kind: "landing-gone-acknowledged", packet: id, commit: gone.commit, by }]);
  output.out(`${id} stays merged in the ledger; its landing ${gone.commit.slice(0, 10)} is gone from ${workspace.branch} on purpose, and is no longer warned about.`);
  return EXIT.ok;
}
