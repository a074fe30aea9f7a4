import type { Output } from "../log/output.js";
import { goneLandings } from "../loop/gone-landings.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, loadPacketRecord, type PersonInput, personName, refuseAgents } from "./packet-record.js";

export interface AcknowledgeOptions extends PersonInput {
  cwd: string;
  id: string;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/**
 * A person says a merged packet's landing is gone from the target on purpose
 * (a revert they meant, a history they rewrote): it stays merged in the
 * ledger, is no longer warned about, and what requires it may run again.
 * Only a landing the target really no longer has can be acknowledged.
 */
export async function acknowledge(options: AcknowledgeOptions): Promise<ExitCode> {
  const { output, id } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory acknowledge refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const loaded = await loadPacketRecord(options.cwd, id, output);
  if (!loaded) return EXIT.invalid;
  const { workspace } = loaded;
  const gone = (await goneLandings(workspace.root, workspace.tip, workspace.branch, (await workspace.ledger.read()).state)).find((landing) => landing.packet === id);
  if (!gone) {
    const state = loaded.record?.status.state ?? "queued";
    output.err(state === "merged" ? `${id}'s landing is on ${workspace.branch}; there is nothing to acknowledge` : `${id} is ${state}, not merged; there is nothing to acknowledge`);
    return EXIT.invalid;
  }
  if (!(await confirmByPerson("acknowledge", id, `accept that its landing ${gone.commit.slice(0, 10)} is gone from ${workspace.branch}`, options, output))) return EXIT.invalid;
  const by = await personName(workspace.root);
  await workspace.ledger.append([{ kind: "landing-gone-acknowledged", packet: id, commit: gone.commit, by }]);
  output.out(`${id} stays merged in the ledger; its landing ${gone.commit.slice(0, 10)} is gone from ${workspace.branch} on purpose, and is no longer warned about.`);
  return EXIT.ok;
}
