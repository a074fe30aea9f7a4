import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { FACTORY_WORKTREES } from "../git/git-file.js";
import { HELD_REFS } from "../git/held-refs.js";
import { gitUserName } from "../git/repo.js";
import type { PacketHistory } from "../ledger/fold.js";
import { describeBreak } from "../ledger/store.js";
import type { Output } from "../log/output.js";
import { recordHeldVersions } from "../loop/held.js";
import type { Packet } from "../packet/types.js";
import { AGENT_VARIABLES, agentAncestor } from "../process/ancestry.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspaceOrReport, type Workspace } from "./workspace.js";

export interface LoadedPacket {
  workspace: Workspace;
  packet: Packet | undefined;
  /** With its events: these commands show or judge the packet's history. */
  record: PacketHistory | undefined;
}

/** The workspace, the packet's current definition and its ledger record; prints why when there is none. */
export async function loadPacketRecord(cwd: string, id: string, output: Output): Promise<LoadedPacket | undefined> {
  const workspace = await loadWorkspaceOrReport(cwd, output, { trustCache: false }); // approve, reject, unblock, reset decide on it
  if (!workspace) return undefined;
  // Held work git keeps while the ledger lost it is recorded again first: a person can still approve or reject it.
  const before = await workspace.ledger.read();
  if (!describeBreak(before)) {
    const read = { packets: async () => workspace.queue.packets, state: async () => before.state };
    for (const restored of await recordHeldVersions(workspace.root, workspace.ledger, read)) {
      output.err(`notice: ${restored}'s held attempt, kept in git (${HELD_REFS}${restored}), is recorded again`);
    }
  }
  const read = await workspace.ledger.history();
  const broken = describeBreak(read);
  if (broken) {
    output.err(`${broken}.\nNothing was changed: a decision on a history that cannot be trusted would not be yours.`);
    return undefined;
  }
  const state = read.state;
  const packet = workspace.queue.packets.find((candidate) => candidate.id === id);
  const record = state.packets.get(id);
  if (!packet && !record) {
    output.err(`no packet "${id}" on ${workspace.branch} or in the ledger; \`factory status\` lists them`);
    return undefined;
  }
  return { workspace, packet, record };
}

/** What every person's command is given. */
export interface PersonCommand extends PersonInput {
  cwd: string;
  id: string;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/**
 * The start every person's command shares (approve, reject, reset, unblock,
 * answer): a command run by an agent is refused; its own arguments are
 * checked (`args`: the whole message of a problem); what must happen before
 * the packet is read is done (`before`: approve fetches the remote's target);
 * the packet and its record are loaded; its state is checked (`state`: why
 * this command cannot act on it). Each refusal is said once and changes
 * nothing: exit 2, unless `before` says otherwise.
 */
export async function personPreamble(
  command: string,
  options: PersonCommand,
  steps: {
    args?: () => string | undefined;
    before?: () => Promise<ExitCode | undefined>;
    state?: (loaded: LoadedPacket) => string | undefined | Promise<string | undefined>;
  } = {},
): Promise<{ ok: true; loaded: LoadedPacket } | { ok: false; code: ExitCode }> {
  const { output } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory ${command} refused: ${refusal}.`);
    return { ok: false, code: EXIT.invalid };
  }
  const problem = steps.args?.();
  if (problem) {
    output.err(problem);
    return { ok: false, code: EXIT.invalid };
  }
  const stopped = await steps.before?.();
  if (stopped !== undefined) return { ok: false, code: stopped };
  const loaded = await loadPacketRecord(options.cwd, options.id, output);
  if (!loaded) return { ok: false, code: EXIT.invalid };
  const refused = await steps.state?.(loaded);
  if (refused) {
    output.err(refused);
    return { ok: false, code: EXIT.invalid };
  }
  return { ok: true, loaded };
}

/**
 * Refuses commands only a person may run (approve, reject, unblock, reset)
 * when called by an agent: from inside a factory worktree, with an agent's
 * variables, or from a process whose ancestry includes an agent or a
 * factory run (a child that dropped the variables still has its parent's).
 */
export function refuseAgents(cwd: string, env: NodeJS.ProcessEnv, ancestor: () => string | undefined = agentAncestor): string | undefined {
  // Worktrees live under <cache>/factory/worktrees/ or /var/tmp/factory-<uid>/worktrees/ (older versions: <repository>/.factory/worktrees/).
  if (FACTORY_WORKTREES.test(`${cwd}/`)) return "it is run from inside a factory worktree; run it from your own checkout";
  const agentVariables = AGENT_VARIABLES.filter((name) => env[name]);
  if (agentVariables.length > 0) return `it is run by an agent process (${agentVariables.join(", ")} set); only a person can do this`;
  const found = ancestor();
  if (found) return `it is run from inside an agent or a factory run (${found}); only a person can do this, from their own terminal`;
  return undefined;
}

/** Who a person is, for the ledger: git's user.name, else the OS user. */
export async function personName(root: string): Promise<string> {
  return (await gitUserName(root)) ?? userInfo().username;
}

/** What a person's command needs to confirm: `--yes`, or a terminal to type the packet id on. */
export interface PersonInput {
  yes: boolean;
  /** Where the typed confirmation comes from; a TTY unless scripted. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
}

/**
 * A person confirms by typing the packet id in a terminal, or by passing
 * `--yes` (a person scripting it). Without either (no terminal: an agent's
 * pipe), the command refuses and nothing changes.
 */
export async function confirmByPerson(command: string, id: string, action: string, person: PersonInput, output: Output): Promise<boolean> {
  if (person.yes) return true;
  if (!person.input.isTTY) {
    output.err(`factory ${command} needs a person: run it in a terminal and type ${id}, or pass --yes when you script it yourself. Nothing changed.`);
    return false;
  }
  const prompt = createInterface({ input: person.input, output: process.stdout });
  const typed = (await prompt.question(`Type ${id} to ${action}: `)).trim();
  prompt.close();
  if (typed !== id) output.err("The id did not match. Nothing changed.");
  return typed === id;
}
