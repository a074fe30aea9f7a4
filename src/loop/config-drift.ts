import { CONFIG_PATH } from "../config/types.js";
import { objectId } from "../git/repo.js";
import type { RunContext } from "./context.js";

/** The config versions a run has already said it is not using: each is said once. */
const told = new WeakMap<RunContext, Set<string>>();

/**
 * A run keeps the config it started with (the gates and limits of one
 * night do not change under its attempts). When a packet's attempt starts
 * from a tip whose committed config differs, the run says so once for that
 * version, with what to do to use it.
 */
export async function noticeNewerConfig(ctx: RunContext, tip: string): Promise<void> {
  const run = ctx.runContext ?? ctx;
  const from = run.configFrom;
  if (!from || from === tip) return;
  const [was, now] = await Promise.all([objectId(ctx.root, `${from}:${CONFIG_PATH}`), objectId(ctx.root, `${tip}:${CONFIG_PATH}`)]);
  if (was === now) return;
  const seen = told.get(run) ?? new Set<string>();
  told.set(run, seen);
  if (seen.has(now ?? "")) return;
  seen.add(now ?? "");
  ctx.emit({
    kind: "notice",
    message: `${CONFIG_PATH} changed on ${ctx.branch} since this run started (read at ${from.slice(0, 10)}, now ${tip.slice(0, 10)}); this run keeps the config it started with: stop it and start it again to use the new one`,
  });
}
