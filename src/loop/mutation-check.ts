import { join } from "node:path";
import type { Packet } from "../packet/types.js";
import { measureMutants, SHARE_SPENT } from "../planning/mutants.js";
import { crashPoint } from "../util/crash-point.js";
import { checkInterrupted, Interrupted, RUNS_DIR, type RunContext } from "./context.js";
import { mutantsFlag, mutantsNotes } from "./mutation-verdict.js";

/**
 * At the end of a run, for every packet it landed: the mutation check
 * (planning/mutants.ts) within `[planning] mutants`, recorded as a
 * `mutants-measured` event. It never changes what landed; it says how much
 * the planted tests are worth. Interrupted, it stops where it is.
 */
export async function checkLandedMutants(ctx: RunContext, input: { packets: readonly Packet[]; landed: readonly { id: string; commit: string }[]; runMs: number }): Promise<void> {
  const budget = ctx.config.planning.mutants;
  if (budget === 0) return;
  // A share of the night, never more: what it could not run is said.
  const share = ctx.config.planning.mutantsShare;
  const deadline = share > 0 ? Date.now() + share * input.runMs : undefined;
  let judged = false;
  let setupMs = 0; // the costliest check's setup so far: a packet's check is not begun when its setup would end past the share
  for (const { id, commit } of input.landed) {
    const packet = input.packets.find((candidate) => candidate.id === id);
    if (!packet) continue;
    try {
      checkInterrupted(ctx.signal);
      if (judged && deadline !== undefined && Date.now() + setupMs >= deadline) {
        // Past the share, a packet's check would cost its scratch checkout and a run of the landed code before any mutant.
        const reason = SHARE_SPENT;
        await ctx.ledger.append([{ kind: "mutants-measured", packet: id, commit, made: 0, killed: 0, budget, reason }]);
        ctx.emit({ kind: "notice", packet: id, message: `mutants: not measured: ${reason}` });
        continue;
      }
      ctx.emit({ kind: "notice", packet: id, message: `mutants: running its planted and hidden tests against at most ${budget} mutants of its changed lines` });
      crashPoint("run-in-mutation-check");
      const measured = await measureMutants(ctx, { packet, commit, runDir: join(ctx.root, RUNS_DIR, id, `mutants-${commit.slice(0, 10)}`), budget, first: !judged, ...(deadline ? { deadline } : {}) });
      setupMs = Math.max(setupMs, measured.setupMs ?? 0);
      await ctx.ledger.append([
        {
          kind: "mutants-measured",
          packet: id,
          commit,
          made: measured.made,
          killed: measured.killed,
          budget,
          ...(measured.reason ? { reason: measured.reason } : {}),
          ...(measured.survivors.length ? { survivors: measured.survivors } : {}),
          ...(measured.killedExample ? { killedExample: measured.killedExample } : {}),
          ...(measured.unrun ? { unrun: measured.unrun } : {}),
          ...(measured.timedOut ? { timedOut: measured.timedOut } : {}),
        },
      ]);
      judged ||= measured.made > 0;
      const flag = mutantsFlag(measured);
      const said = measured.reason ? `not measured: ${measured.reason}` : `${measured.killed} of ${measured.made} mutants killed${mutantsNotes(measured)}${flag ? `: ${flag}` : ""}`;
      ctx.emit({ kind: "notice", packet: id, message: `mutants: ${said}` });
    } catch (error) {
      if (error instanceof Interrupted) return;
      // What landed stands: a check that could not be made is said, never a failed run.
      ctx.emit({ kind: "notice", packet: id, message: `mutants: not measured: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` });
    }
  }
}
