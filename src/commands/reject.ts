import { stamp } from "../ledger/events.js";
import { withLandLock } from "../ledger/store.js";
import { whileUnclaimed } from "../loop/claim.js";
import { dropHeld } from "../loop/held.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { confirmByPerson, type PersonCommand, personName, personPreamble } from "./packet-record.js";

export interface RejectOptions extends PersonCommand {
  reason: string;
}

/** Sends a held packet back; the reason becomes the next attempt's feedback. */
export async function reject(options: RejectOptions): Promise<ExitCode> {
  const { output, id } = options;
  const start = await personPreamble("reject", options, {
    args: () => (options.reason.trim() === "" ? 'factory reject needs --reason "…": it is the feedback for the next attempt' : undefined),
    state: ({ record }) => {
      const state = record?.status.state ?? "queued";
      return state === "awaiting_human" ? undefined : `${id} is ${state}, not awaiting_human; only a held packet can be rejected`;
    },
  });
  if (!start.ok) return start.code;
  const { loaded } = start;
  if (!(await confirmByPerson("reject", id, "send it back", options, output))) return EXIT.invalid;
  const by = await personName(loaded.workspace.root);
  const root = loaded.workspace.root;
  const held = loaded.record?.status;
  // Under the landing lock: an approval or a run may have landed this work while this command was asking.
  const rejected = await withLandLock(root, async () => {
    // One ledger transaction: on PostgreSQL an approval on another machine claims the packet under the same lock.
    const refused = await whileUnclaimed(loaded.workspace.ledger, id, async (tx) => {
      const now = (await tx.read()).state.packets.get(id)?.status;
      if (now?.state !== "awaiting_human" || held?.state !== "awaiting_human" || now.commit !== held.commit) return now?.state ?? "queued";
      await tx.append([stamp({ kind: "rejected", packet: id, by, reason: options.reason.trim() })]);
      return undefined;
    });
    if (!refused) await dropHeld(root, id, loaded.workspace.config?.target.remote);
    return refused;
  });
  if (rejected) {
    output.err(`${id} is ${rejected} now, no longer the held attempt you saw; nothing was rejected.`);
    return EXIT.invalid;
  }
  const record = loaded.record;
  const left = loaded.packet && record ? loaded.packet.maxAttempts + record.extraAttempts - record.attemptsUsed : 0;
  output.out(
    `${id} sent back by ${by}. The next \`factory run\` retries it with your reason as feedback${left <= 0 ? ` — but it has no attempts left, so it will block; \`factory unblock ${id}\` gives it more` : ""}.`,
  );
  return EXIT.ok;
}
