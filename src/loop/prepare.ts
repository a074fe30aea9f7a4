import { appendFileSync, existsSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Surface } from "../config/types.js";
import type { PlantedCases } from "../gates/test-compare.js";
import { recordDependencies } from "../git/dependency-dirs.js";
import { headOf, listTree, readBlobBytes } from "../git/repo.js";
import { commitPaths, createWorktree } from "../git/worktree.js";
import { sandboxFor } from "../guards/sandbox-policy.js";
import { SUPPLIED_DIR } from "../packet/load.js";
import type { Packet } from "../packet/types.js";
import { baseEnv, describeOutcome, runCommand } from "../process/run.js";
import { type RunContext, taskBranch, worktreePath } from "./context.js";
import { installKeyOf, restoreInstall, saveInstall } from "./install-cache.js";
import { packageCaches } from "./package-caches.js";

/** A fresh worktree on the task branch, at the target tip. */
export async function prepareWorktree(ctx: RunContext, packet: Packet, tip: string): Promise<string> {
  const path = worktreePath(ctx.root, packet.id);
  const created = await createWorktree(ctx.root, { path, branch: taskBranch(packet.id), start: tip });
  if (created.movedAside)
    ctx.emit({ kind: "notice", packet: packet.id, message: `something that was not this packet's worktree was at ${path}; moved aside to ${created.movedAside} (nothing deleted)` });
  if (created.detached)
    ctx.emit({
      kind: "notice",
      packet: packet.id,
      message: `its earlier worktree at ${created.detached} (where worktrees went before) had ${taskBranch(packet.id)} checked out: it keeps its files, detached at the commit it had (git worktree remove it when done)`,
    });
  return path;
}

/** Runs the surface's install command once in a fresh worktree; a failure is the environment's. */
export async function installSurface(ctx: Pick<RunContext, "root" | "config" | "signal">, worktree: string, surface: Surface, runDir: string): Promise<string | undefined> {
  if (!surface.install) return undefined;
  mkdirSync(runDir, { recursive: true });
  const logFile = join(runDir, `install-${surface.name}.log`);
  const key = await installKeyOf(worktree, { ...surface, install: surface.install });
  if (key && (await restoreInstall(ctx.root, key, worktree, surface))) {
    appendFileSync(logFile, `factory: node_modules copied from .factory/state/installs/${key}: the same install command and lock files were installed before; "${surface.install}" not run\n`);
    await recordDependencies(worktree);
    return undefined;
  }
  const caches = packageCaches(ctx.root);
  // An install fetches dependencies (the network), into the factory's own package caches (writable).
  const sandbox = sandboxFor(ctx, worktree, { network: true, writable: [caches.dir] });
  const outcome = await runCommand({
    command: surface.install,
    cwd: join(worktree, surface.dir),
    env: { ...baseEnv(), ...caches.env },
    timeoutMs: ctx.config.limits.installTimeoutMs,
    logFile,
    signal: ctx.signal,
    ...(sandbox ? { sandbox } : {}),
  });
  if (outcome.kind === "exited" && outcome.code === 0) {
    await recordDependencies(worktree);
    const notSaved = key ? await saveInstall(ctx.root, key, worktree, surface) : "there is no lock file";
    if (notSaved) appendFileSync(logFile, `factory: this install is not reused by other worktrees: ${notSaved}\n`);
    return undefined;
  }
  return `install of surface "${surface.name}" (${surface.install}) ${describeOutcome(outcome)}`;
}

export interface Planting {
  commit: string;
  /** Repository paths of the planted files. */
  files: string[];
  /** Per tests gate: the planted test cases seen right after planting, which must pass after the implementation. */
  cases?: Record<string, PlantedCases>;
}

/**
 * Copies `packets/supplied/<ID>/` from git at the tip into the worktree,
 * mirroring repository paths, and commits it: each file's exact bytes and
 * mode as git holds them (binary fixtures, executables and symbolic links
 * included; no filter or attribute applies), read in one `git cat-file --batch`.
 */
export async function plant(ctx: Pick<RunContext, "root">, worktree: string, packet: Packet, tip: string): Promise<Planting> {
  const prefix = `${SUPPLIED_DIR}/${packet.id}/`;
  const entries = [...(await listTree(ctx.root, tip, prefix))].filter(([path, entry]) => path.startsWith(prefix) && entry.mode !== "160000");
  const files = entries.map(([path]) => path.slice(prefix.length));
  if (files.length === 0) return { commit: await headOf(worktree), files };
  const contents = await readBlobBytes(
    ctx.root,
    entries.map(([, entry]) => entry.sha),
  );
  const planted = entries.map(([path, entry], index) => {
    const bytes = contents[index];
    if (bytes === undefined) throw new Error(`planting ${path} failed: git has no blob ${entry.sha}`);
    return { path: path.slice(prefix.length), mode: entry.mode, bytes };
  });
  return plantFiles(worktree, planted, `factory: plant the supplied files of ${packet.id}`);
}

/** Writes `files` (repository paths) into the worktree and commits them, and only them. */
export async function plantFiles(worktree: string, files: readonly { path: string; mode: string; bytes: Buffer }[], message: string): Promise<Planting> {
  for (const file of files) writePlanted(worktree, file.path, file.mode, file.bytes);
  // Only the planted files: nothing else in the worktree is the packet's.
  const paths = files.map((file) => file.path);
  const commit = await commitPaths(worktree, paths, message);
  return { commit, files: paths };
}

/** Writes one planted file under `worktree`, never through a symbolic link that is already there. */
function writePlanted(worktree: string, path: string, mode: string, bytes: Buffer): void {
  const parts = path.split("/");
  if (parts.some((part) => part === "" || part === "." || part === "..")) throw new Error(`planting ${path} failed: not a plain relative path`);
  let dir = worktree;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    if (!existsSync(dir)) mkdirSync(dir);
    else if (!lstatSync(dir).isDirectory()) throw new Error(`planting ${path} failed: ${relative(worktree, dir)} in the worktree is not a directory (a symbolic link is never followed)`);
  }
  const target = join(worktree, path);
  rmSync(target, { force: true });
  if (mode === "120000") symlinkSync(bytes.toString("utf8"), target);
  else writeFileSync(target, bytes, { mode: mode === "100755" ? 0o755 : 0o644 });
}
