import { type Dirent, existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative } from "node:path";
import { matchesAny } from "../gates/paths.js";
import { DEPENDENCY_PATTERNS } from "../git/worktree.js";
import type { SandboxRequest } from "../process/sandbox.js";
import { type RunContext, worktreesDir } from "../loop/context.js";

/**
 * The sandbox of one agent call or gate run in a worktree (DESIGN §12): the
 * worktree writable, the rest of the machine read-only or hidden. Undefined
 * when the config chose `[sandbox] kind = "none"`.
 */
export function sandboxFor(
  ctx: Pick<RunContext, "root" | "config">,
  worktree: string,
  options: { network: boolean; writable?: string[]; readable?: string[]; readOnly?: string[]; homeSeed?: readonly string[]; keepHome?: string },
): SandboxRequest | undefined {
  if (ctx.config.sandbox.kind === "none") return undefined;
  // The other worktrees of the repository: under HOME the private HOME hides them already (and a mount there could not be made).
  const others = worktreesDir(ctx.root);
  const underHome = !relative(homedir(), others).startsWith("..");
  return {
    root: ctx.root,
    ...(underHome ? {} : { hide: [others] }),
    writable: [worktree, ...(options.writable ?? [])],
    readable: options.readable ?? [],
    readOnly: options.readOnly ?? [],
    network: options.network,
    homeSeed: options.homeSeed ?? [],
    homeKeep: ctx.config.sandbox.home,
    ...(options.keepHome ? { keepHome: options.keepHome } : {}),
  };
}

/** `{ sandbox }` for a gate, fix or install run, to spread into a run request; empty when unsandboxed. */
export function sandboxed(ctx: Pick<RunContext, "root" | "config">, worktree: string, network: boolean): { sandbox?: SandboxRequest } {
  const sandbox = sandboxFor(ctx, worktree, { network });
  return sandbox ? { sandbox } : {};
}

/**
 * `{ sandbox }` for an agent call: with the network (it must reach its
 * provider), its role's HOME kept in the run directory (its sessions: a
 * correction round resumes one), and the dependencies the install produced
 * read-only, so an agent cannot change what the gates will import.
 */
export function agentSandboxed(ctx: Pick<RunContext, "root" | "config">, worktree: string, home: string, program?: string): { sandbox?: SandboxRequest } {
  const readable = program && existsSync(program) ? programMounts(program, homedir()) : [];
  const sandbox = sandboxFor(ctx, worktree, { network: true, keepHome: home, readOnly: dependencyDirs(worktree), readable });
  return sandbox ? { sandbox } : {};
}

/**
 * Pure: what of an agent's program configured by path is made readable inside the sandbox: its directory
 * (a script beside its helpers), or the file alone when that directory is HOME or holds it: mounting it
 * would show the real HOME, keys and tokens included, in place of the private one.
 */
export function programMounts(program: string, home: string): string[] {
  const fromDir = relative(dirname(program), home);
  const holdsHome = fromDir === "" || (!fromDir.startsWith("..") && !isAbsolute(fromDir));
  return [holdsHome ? program : dirname(program)];
}

/** The install's dependency directories in a worktree: at its root and one level down (a surface's dir). */
function dependencyDirs(worktree: string): string[] {
  const found: string[] = [];
  const scan = (dir: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === ".git" || entry.name === ".factory") continue;
      const path = join(dir, entry.name);
      if (matchesAny(entry.name, DEPENDENCY_PATTERNS)) found.push(path);
      else if (depth > 0) scan(path, depth - 1);
    }
  };
  scan(worktree, 1);
  return found;
}
