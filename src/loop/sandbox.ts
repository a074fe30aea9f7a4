import type { SandboxRequest } from "../process/sandbox.js";
import type { RunContext } from "./context.js";

/**
 * The sandbox of one agent call or gate run in a worktree (DESIGN §12): the
 * worktree writable, the rest of the machine read-only or hidden. Undefined
 * when the config chose `[sandbox] kind = "none"`.
 */
export function sandboxFor(
  ctx: Pick<RunContext, "root" | "config">,
  worktree: string,
  options: { network: boolean; writable?: string[]; readable?: string[]; homeSeed?: readonly string[]; keepHome?: string },
): SandboxRequest | undefined {
  if (ctx.config.sandbox.kind === "none") return undefined;
  return {
    root: ctx.root,
    writable: [worktree, ...(options.writable ?? [])],
    readable: options.readable ?? [],
    network: options.network,
    homeSeed: options.homeSeed ?? [],
    homeKeep: ctx.config.sandbox.home,
    ...(options.keepHome ? { keepHome: options.keepHome } : {}),
  };
}

/** `{ sandbox }` for a gate, fix or install run, to spread into a run request; empty when unsandboxed. */
export function sandboxed(ctx: Pick<RunContext, "root" | "config">, worktree: string, network: boolean, keepHome?: string): { sandbox?: SandboxRequest } {
  const sandbox = sandboxFor(ctx, worktree, { network, ...(keepHome ? { keepHome } : {}) });
  return sandbox ? { sandbox } : {};
}
