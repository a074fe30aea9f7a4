import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { execa } from "execa";
import { dirEntries } from "../util/dir-entries.js";
import { bwrapArgs, checkoutShown, emptiedDirs, homeKeepDirs, hostSocketFiles, npmInstallOf, SOCKET_DIRS, TEMPORARY_DIRS } from "./bwrap-args.js";
import { credentialFreeConfig } from "./git-config-view.js";
import { unixSocketFilter } from "./seccomp.js";
import { absolutePathsIn } from "./shell-words.js";

export { npmInstallOf } from "./bwrap-args.js";

/** What one sandboxed call may see and change (DESIGN §12). */
export interface SandboxRequest {
  /** The repository root: readable; its `.factory/state`, `runs` and `worktrees` are hidden. */
  root: string;
  /** The only writable places: the worktree, a report directory. */
  writable: string[];
  /** More directories hidden under an empty tmpfs (the repository's other worktrees, outside it); the writable places inside stay. */
  hide?: readonly string[];
  /** Files or directories inside hidden places that the call must read (a prompt file). */
  readable?: string[];
  /** Directories inside the writable places that stay read-only (an install's dependencies, for an agent). */
  readOnly?: string[];
  /** Directories inside the read-only ones that the call gets as empty, writable scratch space, thrown away after it (a runner's cache in node_modules). */
  scratch?: string[];
  network: boolean;
  /** Paths relative to HOME copied into the private HOME (an agent CLI's credentials and settings). */
  homeSeed?: readonly string[];
  /** Extra paths relative to HOME that stay readable (`[sandbox] home`). */
  homeKeep?: readonly string[];
  /** Refuse every unix socket the call would open (an agent, in the host's network namespace: seccomp.ts). */
  noUnixSockets?: boolean;
  /**
   * A private HOME kept after the call (an agent's sessions, so that a
   * correction round can resume one); without it, HOME is thrown away.
   * Seeded credentials are removed from it when the call ends.
   */
  keepHome?: string;
}

export const HIDDEN_STATE = [".factory/state", ".factory/runs", ".factory/worktrees", ".factory/holdout"];

export interface OpenSandbox {
  file: string;
  args: string[];
  /** The seccomp filter bwrap reads from descriptor SECCOMP_FD, when there is one. */
  seccomp?: Uint8Array;
  env: Record<string, string | undefined>;
  close(): void;
}

/**
 * Prepares one call's private HOME and temporary directory and returns the
 * bwrap command that runs `command` inside them; `close` removes both.
 */
export function openSandbox(request: SandboxRequest, command: string, cwd: string, env: Record<string, string | undefined>, wraps: string = command): OpenSandbox {
  const home = env.HOME ?? homedir();
  // Named by this process's pid: one a kill leaves behind is found and removed at the next start (loop/leftovers.ts).
  const base = mkdtempSync(join(tmpdir(), `factory-sandbox-${process.pid}-`));
  const privateHome = request.keepHome ?? join(base, "home");
  const privateTmp = join(base, "tmp");
  mkdirSync(privateHome, { recursive: true });
  mkdirSync(privateTmp);
  const seeded: string[] = [];
  for (const path of request.homeSeed ?? []) {
    const source = join(home, path);
    mkdirSync(dirname(join(privateHome, path)), { recursive: true }); // a CLI's own directory (~/.codex) exists even with nothing to copy
    if (!existsSync(source)) continue;
    cpSync(source, join(privateHome, path), { recursive: true, dereference: true });
    seeded.push(join(privateHome, path));
  }
  // /run is the host's sockets' (docker, D-Bus, a database's): emptied for every call, the resolver's file shown again.
  const candidates = [...TEMPORARY_DIRS, tmpdir(), ...SOCKET_DIRS].filter(isRealDirectory);
  // A PATH entry inside an npm install (node_modules/.bin) needs the packages beside it, as a named program does.
  const path = env.PATH?.split(":")
    .map((entry) => (isAbsolute(entry) ? npmInstallOf(entry) : entry))
    .join(":");
  // The paths the command line names (the one a tracer wraps, whose words are one argument of the tracer's).
  const named = [...absolutePathsIn(wraps).flatMap(shownFor), ...resolverFiles()];
  const { emptied, keep } = emptiedDirs(candidates, path, named);
  const hiddenState = HIDDEN_STATE.map((dir) => join(request.root, dir));
  const gitDirs = gitDirsOf(request.root);
  // A checkout that is itself a linked worktree keeps its git directories elsewhere (perhaps under HOME): shown too.
  const gitElsewhere = gitDirs.filter((dir) => !dir.startsWith(`${request.root}/`) && existsSync(dir));
  const rootShown = checkoutShown(request.root, gitDirs, [...(path ?? "").split(":"), ...named], hiddenState).filter((dir) => existsSync(dir));
  const replaced = credentialFreeConfigs(gitDirs, base);
  const unseen = [...emptied, home, request.root, ...request.writable, ...(request.hide ?? [])];
  const shownAgain = [...keep, ...gitElsewhere, ...rootShown, ...(request.readable ?? []), ...homeKeepDirs(home, env.PATH, request.homeKeep ?? [])];
  const masked = hostSocketFiles(readText("/proc/net/unix"), unseen, shownAgain).filter((file) => isSocket(file));
  const seccomp = request.noUnixSockets ? unixSocketFilter() : undefined;
  const args = bwrapArgs(
    {
      home,
      privateHome,
      privateTmp,
      homeKeep: homeKeepDirs(home, env.PATH, request.homeKeep ?? []).filter((dir) => existsSync(dir)),
      root: request.root,
      rootShown,
      // The state inside the checkout is gone with it; what is shown there never reaches into it.
      hidden: (request.hide ?? []).filter((dir) => existsSync(dir)),
      secretFiles: secretFiles(process.env),
      replaced,
      masked,
      ...(seccomp ? { seccompFd: SECCOMP_FD } : {}),
      readable: [
        ...(request.readable ?? []),
        ...notCovered(
          [...keep, ...gitElsewhere].filter((dir) => existsSync(dir)),
          [...(request.readable ?? []), ...request.writable, ...rootShown],
        ),
      ],
      writable: request.writable,
      readOnly: (request.readOnly ?? []).filter((path) => existsSync(path)),
      scratch: (request.scratch ?? []).filter((path) => existsSync(path)),
      emptied,
      network: request.network,
      cwd,
    },
    command,
  );
  return {
    file: "bwrap",
    args,
    ...(seccomp ? { seccomp } : {}),
    env: { ...env, HOME: home, TMPDIR: privateTmp },
    close: () => {
      rmSync(base, { recursive: true, force: true });
      for (const path of seeded) rmSync(path, { recursive: true, force: true }); // no credentials left in a kept HOME
    },
  };
}

/** The descriptor bwrap reads a seccomp filter from (0–2 are stdio, 3 its info pipe). */
export const SECCOMP_FD = 4;

/** The resolver's configuration where it lives under /run (systemd-resolved's stub): shown again in the emptied /run. */
function resolverFiles(): string[] {
  try {
    const real = realpathSync("/etc/resolv.conf");
    return real !== "/etc/resolv.conf" ? [real] : [];
  } catch {
    return [];
  }
}

/**
 * The repository's git configuration files (its own, and each worktree's `config.worktree`) as copies
 * without credentials (git-config-view.ts), written into the call's own directory.
 */
function credentialFreeConfigs(gitDirs: readonly string[], base: string): { source: string; target: string }[] {
  const files = gitDirs.flatMap((dir) => [join(dir, "config"), ...dirEntries(join(dir, "worktrees")).map((entry) => join(dir, "worktrees", entry.name, "config.worktree"))]);
  const replaced: { source: string; target: string }[] = [];
  for (const [index, target] of [...new Set(files)].entries()) {
    let text: string;
    try {
      if (!lstatSync(target).isFile()) continue;
      text = readFileSync(target, "utf8");
    } catch {
      continue;
    }
    const source = join(base, `git-config-${index}`);
    writeFileSync(source, credentialFreeConfig(text));
    replaced.push({ source, target });
  }
  return replaced;
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * What to show for a path a command line names: the path itself, or for a symbolic link (node_modules/.bin/x)
 * the directory that holds the link and the one that holds what it points to, as a link cannot be mounted.
 */
function shownFor(path: string): string[] {
  try {
    const shown = lstatSync(path).isSymbolicLink() ? [dirname(path), dirname(realpathSync(path))] : [path];
    // Inside an npm install (node_modules/.bin/codex), a program needs its sibling packages too.
    return shown.map(npmInstallOf);
  } catch {
    return [];
  }
}

/** Pure: the paths not already inside (or equal to) one of `mounted`: mounting one again over a read-only mount fails. */
export function notCovered(paths: readonly string[], mounted: readonly string[]): string[] {
  return paths.filter((path, index) => {
    if (mounted.includes(path) || paths.indexOf(path) < index) return false;
    return ![...paths, ...mounted].some((other) => path.startsWith(`${other}/`));
  });
}

function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether bubblewrap is installed and can build a sandbox here; the reason when not. */
export async function checkSandbox(root: string, again = true): Promise<{ ok: true } | { ok: false; reason: string }> {
  const opened = openSandbox({ root, writable: [], network: false }, "true", root, { PATH: process.env.PATH, HOME: homedir() });
  try {
    const result = await execa(opened.file, opened.args, { env: opened.env, extendEnv: false, reject: false, timeout: 30_000, stdin: "ignore" });
    if (result.failed && result.exitCode === undefined) {
      // The cause and the fix first, never bwrap's whole argument list.
      const missing = (result as { code?: string }).code === "ENOENT";
      return {
        ok: false,
        reason: missing ? "bubblewrap (bwrap) is not installed, or not on PATH" : `bwrap could not start (${String((result as { code?: string }).code ?? result.shortMessage ?? "").slice(0, 120)})`,
      };
    }
    // A host socket the plan covered went away before bwrap started (its server closed): a fresh plan no longer names it.
    const gone = /(?:Can't mkdir parents for|Can't create file at) (\S+?):/.exec(String(result.stderr ?? ""))?.[1];
    if (result.exitCode !== 0 && again && gone !== undefined && !existsSync(gone)) return await checkSandbox(root, false);
    if (result.exitCode !== 0)
      return {
        ok: false,
        reason: `bwrap could not build a sandbox: ${
          String(result.stderr ?? "")
            .trim()
            .split("\n")
            .slice(-2)
            .join(" | ") || `exit ${result.exitCode}`
        }`,
      };
    return { ok: true };
  } finally {
    opened.close();
  }
}

export const SANDBOX_HELP =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set [sandbox] kind = "none" in .factory/config.toml to run agents and gates without containment (not recommended)';

/**
 * Files holding the ledger database's credentials, wherever they are (a
 * PGPASSFILE outside HOME would be readable through the read-only root):
 * each is covered by an empty file inside the sandbox. `~/.pgpass` is under
 * the private HOME already.
 */
export function secretFiles(env: NodeJS.ProcessEnv): string[] {
  const named = env.PGPASSFILE && isAbsolute(env.PGPASSFILE) ? [env.PGPASSFILE] : [];
  return named.filter((file) => {
    try {
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The git directories a worktree of the checkout at `root` needs: its `.git`, and where that is a file (the
 * checkout is itself a linked worktree) the directory it names and the common directory behind it.
 */
function gitDirsOf(root: string): string[] {
  const dotGit = join(root, ".git");
  try {
    if (!statSync(dotGit).isFile()) return [dotGit];
    const named = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
    if (!named) return [dotGit];
    const gitDir = resolve(root, named);
    const common = existsSync(join(gitDir, "commondir")) ? resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim()) : gitDir;
    return [dotGit, gitDir, common];
  } catch {
    return [];
  }
}
