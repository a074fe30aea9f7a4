import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import type { Config } from "../config/types.js";
import { dependencyDirs } from "../git/dependency-dirs.js";
import { npmInstallOf, type SandboxRequest } from "../process/sandbox.js";
import { worktreesDir } from "../util/factory-home.js";

/** What a sandbox is made from: the repository and its config. */
type Where = { root: string; config: Config };

/**
 * The sandbox of one agent call or gate run in a worktree (DESIGN §12): the
 * worktree writable, the rest of the machine read-only or hidden. Undefined
 * when the config chose `[sandbox] kind = "none"`.
 */
export function sandboxFor(
  ctx: Where,
  worktree: string,
  options: { network: boolean; writable?: string[]; readable?: string[]; readOnly?: string[]; scratch?: string[]; homeSeed?: readonly string[]; keepHome?: string },
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
    scratch: options.scratch ?? [],
    network: options.network,
    homeSeed: options.homeSeed ?? [],
    homeKeep: ctx.config.sandbox.home,
    ...(options.keepHome ? { keepHome: options.keepHome } : {}),
  };
}

/**
 * `{ sandbox }` for a gate or fix run, to spread into a run request; empty
 * when unsandboxed. The dependencies the install produced are read-only, as
 * for an agent: the code under test runs inside the runner and could
 * otherwise plant a plugin there (a `*.dist-info` entry point, a patched
 * runner in `node_modules`) that every later tests run would load — the
 * planted tests run on their own, the hidden holdout tests, the landing's
 * re-gate. The caches runners keep inside `node_modules` are empty scratch
 * space for the one call. Stay writable: `.tox` and `.nox` (there the
 * runner is the installer), and a Python virtual environment (`uv run`
 * writes its lock and temporary files into `.venv` on every start): its
 * installed packages are watched between runs instead
 * (guards/runner-state.ts).
 */
export function sandboxed(ctx: Where, worktree: string, network: boolean): { sandbox?: SandboxRequest } {
  if (ctx.config.sandbox.kind === "none") return {};
  const dependencies = dependencyDirs(worktree).filter((dir) => !RUNNER_MANAGED.includes(basename(dir)));
  const sandbox = sandboxFor(ctx, worktree, { network, readOnly: dependencies, scratch: scratchDirs(dependencies) });
  return sandbox ? { sandbox } : {};
}

/** Dependency directories a tests runner writes itself (tox, nox; uv into a virtual environment): they stay writable to gates. */
const RUNNER_MANAGED = [".tox", ".nox", ".venv", "venv"];
/**
 * Caches runners keep inside `node_modules` (babel, nyc and ava under .cache; vite and vitest under .vite;
 * vite ≥ 6 bundles a `vite.config.mts`/`vitest.config.mts` into .vite-temp before it loads it).
 */
const NODE_MODULES_CACHES = [".cache", ".vite", ".vitest", ".vite-temp"];

/** The cache directories inside the read-only `node_modules` that a call gets as empty scratch space (made here, so the mount has a place). */
function scratchDirs(dependencies: readonly string[]): string[] {
  const dirs = dependencies.filter((dir) => basename(dir) === "node_modules").flatMap((dir) => NODE_MODULES_CACHES.map((cache) => join(dir, cache)));
  return dirs.filter((dir) => {
    try {
      mkdirSync(dir, { recursive: true });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * `{ sandbox }` for an agent call: with the network (it must reach its
 * provider) but no unix socket (the host's are reachable in its network
 * namespace), its role's HOME kept in the run directory (its sessions: a
 * correction round resumes one), and the dependencies the install produced
 * read-only, so an agent cannot change what the gates will import.
 */
export function agentSandboxed(ctx: Where, worktree: string, home: string, program?: string): { sandbox?: SandboxRequest } {
  const readable = program && existsSync(program) ? programMounts(program, homedir(), realpathSync(program)) : [];
  const dependencies = dependencyDirs(worktree);
  const sandbox = sandboxFor(ctx, worktree, { network: true, keepHome: home, readOnly: dependencies, scratch: scratchDirs(dependencies), readable });
  // In the host's network namespace, abstract unix sockets are the host's: an agent opens none.
  return sandbox ? { sandbox: { ...sandbox, noUnixSockets: true } } : {};
}

/**
 * Pure: what of an agent's program configured by path is made readable inside the sandbox: its directory
 * (a script beside its helpers), or the file alone when that directory is HOME or holds it: mounting it
 * would show the real HOME, keys and tokens included, in place of the private one.
 */
export function programMounts(program: string, home: string, real: string = program): string[] {
  const shown = (path: string): string => {
    // Inside an npm install (node_modules/.bin/claude -> ../@anthropic-ai/claude-code/bin/claude.exe) the program needs its packages.
    const install = npmInstallOf(dirname(path));
    const fromDir = relative(install, home);
    const holdsHome = fromDir === "" || (!fromDir.startsWith("..") && !isAbsolute(fromDir));
    return holdsHome ? path : install;
  };
  return [...new Set([shown(program), ...(real !== program ? [shown(real)] : [])])];
}
