import { landedCacheFile, landedPackets, landedVersion } from "../git/trailers.js";
import { deleteBranch, removeWorktree } from "../git/worktree.js";
import { isAlive } from "../ledger/run-lock.js";
import { taskBranch, worktreePath } from "../loop/context.js";
import { dropHeld } from "../loop/held.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";

export type ResetOptions = PersonCommand;

/** Starts a packet over: no attempts used, worktree and task branch removed; the history stays in the ledger. */
export async function reset(options: ResetOptions): Promise<ExitCode> {
  const { output, id } = options;
  const start = await personPreamble("reset", options, {
    state: async ({ workspace, packet, record }) => {
      const landed = packet ? landedVersion(await landedPackets(workspace.root, workspace.branch, { cacheFile: landedCacheFile(workspace.root) }), id, packet.sha256) : undefined;
      if (landed)
        return `${id} is merged on ${workspace.branch} (${landed.commit.slice(0, 10)}, by its Factory-Packet trailers); a reset would land it twice. Change the packet (a new version) to run it again.`;
      const status = record?.status;
      return status?.state === "running" && isAlive(status.owner.pid) ? `${id} is running in pid ${status.owner.pid}; stop that run first` : undefined;
    },
  });
  if (!start.ok) return start.code;
  const { loaded } = start;
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
