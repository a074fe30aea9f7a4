import { landedCacheFile, landedPackets, landedVersion } from "../git/trailers.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import { isAlive } from "../ledger/run-lock.js";
import type { Output } from "../log/output.js";
import { taskBranch, worktreePath } from "../loop/context.js";
import { dropHeld } from "../loop/held.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, loadPacketRecord, type PersonInput, personName, refuseAgents } from "./packet-record.js";

export interface ResetOptions extends PersonInput {
  cwd: string;
  id: string;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/** Starts a packet over: no attempts used, worktree and task branch removed; the history stays in the ledger. */
export async function reset(options: ResetOptions): Promise<ExitCode> {
  const { output, id } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory reset refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const loaded = await loadPacketRecord(options.cwd, id, output);
  if (!loaded) return EXIT.invalid;
  const landed = loaded.packet
    ? landedVersion(await landedPackets(loaded.workspace.root, loaded.workspace.branch, { cacheFile: landedCacheFile(loaded.workspace.root) }), id, loaded.packet.sha256)
    : undefined;
  if (landed) {
    output.err(
      `${id} is merged on ${loaded.workspace.branch} (${landed.commit.slice(0, 10)}, by its Factory-Packet trailers); a reset would land it twice. Change the packet (a new version) to run it again.`,
    );
    return EXIT.invalid;
  }
  const status = loaded.record?.status;
  if (status?.state === "running" && isAlive(status.owner.pid)) {
    output.err(`${id} is running in pid ${status.owner.pid}; stop that run first`);
    return EXIT.invalid;
  }
  if (!(await confirmByPerson("reset", id, "start it over", options, output))) return EXIT.invalid;
  const root = loaded.workspace.root;
  const by = await personName(root);
  await loaded.workspace.ledger.append([{ kind: "reset", packet: id, by }]);
  await removeWorktree(root, worktreePath(root, id));
  await deleteBranch(root, taskBranch(id));
  await dropHeld(root, id, loaded.workspace.config?.target.remote);
  output.out(`${id} starts over at the next \`factory run\` (its history stays: factory status ${id}).`);
  return EXIT.ok;
}
