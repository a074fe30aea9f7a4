import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";

/**
 * Pure: the bubblewrap command line for one sandboxed call (DESIGN §12).
 * Mount order matters, later mounts cover earlier ones:
 *
 * 1. the whole filesystem read-only, a fresh /dev, /proc of a new PID namespace,
 *    and empty directories over the machine's temporary directories (other
 *    users' and programs' files, sockets) and, without the network, over
 *    /run (the host's unix sockets: a docker or D-Bus socket is a way out);
 * 2. a private, writable HOME over the real one (credentials an agent CLI
 *    needs are copied into it beforehand), then the toolchains under the
 *    real HOME (what PATH points into, pyenv, rustup, …) read-only again;
 * 3. the user's checkout replaced by an empty directory (a socket there, a
 *    file not committed, are theirs), with only its `.git` and the tool
 *    directories PATH or the command line names there shown again,
 *    read-only; the other worktrees hidden under empty tmpfs;
 * 4. the few readable extras (a prompt file) and the writable paths (the
 *    worktree, a report directory), and a private temporary directory.
 *
 * The process runs in new user, PID, IPC and UTS namespaces with every
 * capability dropped (as root, capabilities would let it remount / writable),
 * in a new session (no terminal injection), as PID 1 of its namespace, and
 * dies with bwrap. When it exits, the PID namespace ends and every process it
 * left behind (double fork, setsid) is killed by the kernel.
 */
export interface BwrapPlan {
  /** The HOME the process sees; a private directory is mounted over it. */
  home: string;
  privateHome: string;
  privateTmp: string;
  /** Absolute directories under `home` re-exposed read-only (missing ones are skipped). */
  homeKeep: string[];
  /** The user's checkout: an empty directory inside, read-only. */
  root: string;
  /** What of the checkout is shown, read-only: its git directory, and the tool directories PATH or the command names there. */
  rootShown: string[];
  /** Existing directories hidden under an empty tmpfs. */
  hidden: string[];
  /** Existing files replaced by an empty one (the ledger database's password file: never readable inside). */
  secretFiles: string[];
  /** Files shown as another's content (the repository's git configuration, without its credentials). */
  replaced: { source: string; target: string }[];
  /** The host's unix socket files the call could otherwise reach: each covered by an empty file. */
  masked: string[];
  /** The descriptor a seccomp filter is read from (an agent: no unix socket), when there is one. */
  seccompFd?: number;
  readable: string[];
  writable: string[];
  /** Inside the writable places, made read-only again (the dependencies an install produced). */
  readOnly: string[];
  /** Existing directories inside the read-only ones, each covered by an empty tmpfs (a cache the call may write and loses). */
  scratch: string[];
  /** Directories replaced by an empty tmpfs before anything is mounted (/tmp; /run without the network); later mounts inside them reappear. */
  emptied: string[];
  network: boolean;
  cwd: string;
}

export function bwrapArgs(plan: BwrapPlan, command: string): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"];
  for (const dir of plan.emptied) args.push("--tmpfs", dir);
  args.push("--bind", plan.privateHome, plan.home);
  for (const dir of plan.homeKeep) args.push("--ro-bind-try", dir, dir);
  args.push("--tmpfs", plan.root);
  for (const path of plan.rootShown) args.push("--ro-bind", path, path);
  for (const dir of plan.hidden) args.push("--tmpfs", dir);
  for (const path of plan.readable) args.push("--ro-bind", path, path);
  for (const path of plan.writable) args.push("--bind", path, path);
  for (const path of plan.readOnly) args.push("--ro-bind", path, path);
  for (const path of plan.scratch) args.push("--tmpfs", path);
  // Last of the paths: no mount after it may show the file again (a command naming its directory gets that directory).
  for (const file of plan.secretFiles) args.push("--ro-bind", "/dev/null", file);
  for (const { source, target } of plan.replaced) args.push("--ro-bind", source, target);
  for (const socket of plan.masked) args.push("--ro-bind", "/dev/null", socket);
  args.push("--bind", plan.privateTmp, plan.privateTmp);
  // Read-only once every mount inside it has its place: a write there fails, as it would on the checkout itself.
  args.push("--remount-ro", plan.root);
  args.push("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts");
  if (!plan.network) args.push("--unshare-net");
  // --as-pid-1: the command is PID 1 of its namespace and bwrap's direct child, so
  // --die-with-parent reaches it when bwrap is killed, and its end ends every
  // process in the namespace. (With bwrap's own init in between, a killed bwrap
  // left the init, and the agent under it, running.)
  args.push("--cap-drop", "ALL", "--as-pid-1", "--die-with-parent", "--new-session", "--chdir", plan.cwd);
  if (plan.seccompFd !== undefined) args.push("--seccomp", String(plan.seccompFd));
  args.push("--", "/bin/sh", "-c", command);
  return args;
}

/** Toolchains that commonly live under HOME and are found through it rather than PATH. */
export const HOME_TOOLCHAINS = [".pyenv", ".rustup", ".cargo", ".nvm", ".volta", ".asdf", ".local/lib", ".local/share/pnpm", ".bun", ".deno", ".sdkman"];

/**
 * Pure: the directories under `home` that stay readable: the top directory
 * of every PATH entry under it (`~/.pyenv/shims` keeps `~/.pyenv`), the
 * common toolchain homes, and the configured extras. Nothing else of the
 * real HOME (keys, tokens, shell history) is visible.
 */
export function homeKeepDirs(home: string, path: string | undefined, extra: readonly string[]): string[] {
  const keep = new Set<string>();
  for (const entry of (path ?? "").split(":")) {
    if (!isAbsolute(entry)) continue;
    const inside = relative(home, entry);
    if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) continue;
    const top = inside.split(sep)[0];
    if (top) keep.add(join(home, top));
  }
  for (const dir of [...HOME_TOOLCHAINS, ...extra]) keep.add(join(home, dir));
  return [...keep].sort();
}

/** The machine's temporary directories, emptied for every sandboxed call. */
export const TEMPORARY_DIRS = ["/tmp", "/var/tmp"];
/** Where the host's unix sockets live, emptied for every call (the resolver's file there is shown again). */
export const SOCKET_DIRS = ["/run", "/var/run"];

/**
 * Pure: the socket files `/proc/net/unix` lists (bound by the host's programs) that a call would see: not
 * under a directory it does not see as the host has it (`unseen`: emptied, hidden, HOME, the writable places),
 * unless under one shown again there (`shownAgain`: a tool's `node_modules` under /tmp, the checkout's `.git`).
 */
export function hostSocketFiles(procNetUnix: string, unseen: readonly string[], shownAgain: readonly string[] = []): string[] {
  const inside = (path: string, dir: string): boolean => {
    const rest = relative(dir, path);
    return rest === "" || (!rest.startsWith("..") && !isAbsolute(rest));
  };
  const paths = procNetUnix
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/).slice(7).join(" "))
    .filter((path) => path.startsWith("/") && (!unseen.some((dir) => inside(path, dir)) || shownAgain.some((dir) => inside(path, dir))));
  return [...new Set(paths)].sort();
}

/**
 * Pure: the directories to empty for one call, and what under them stays readable: the PATH entries
 * there (a tool installed under /tmp) and the paths the call's command line names there (a script, a
 * runner, its input: the user's config wrote them), never an emptied directory itself.
 */
export function emptiedDirs(candidates: readonly string[], path: string | undefined, named: readonly string[] = []): { emptied: string[]; keep: string[] } {
  const emptied = [...new Set(candidates)];
  const inside = (entry: string): boolean =>
    isAbsolute(entry) &&
    emptied.some((dir) => {
      const rest = relative(dir, entry);
      return rest !== "" && !rest.startsWith("..") && !isAbsolute(rest);
    });
  const keep = [...(path ?? "").split(":"), ...named].filter(inside);
  return { emptied, keep: [...new Set(keep)] };
}

/**
 * Pure: what of the checkout at `root` is shown inside the sandbox: its git directories (`gitDirs`), and of
 * `tools` (PATH entries and paths the command line names) those inside it: a PATH entry's prefix (`.venv`
 * for `.venv/bin`, the `node_modules` of `node_modules/.bin`), never the checkout itself or what `hidden` covers.
 */
export function checkoutShown(root: string, gitDirs: readonly string[], tools: readonly string[], hidden: readonly string[]): string[] {
  const inside = (path: string, dir: string): boolean => {
    const rest = relative(dir, path);
    return rest === "" || (!rest.startsWith("..") && !isAbsolute(rest));
  };
  const prefixes = tools.filter(isAbsolute).map((tool) => {
    const install = npmInstallOf(tool);
    return install === tool && basename(tool) === "bin" ? dirname(tool) : install;
  });
  const shown = [...gitDirs, ...prefixes].filter((path) => path !== root && inside(path, root) && !hidden.some((dir) => inside(path, dir)));
  return [...new Set(shown)].filter((path, _, all) => !all.some((other) => other !== path && inside(path, other)));
}

/** Pure: the `node_modules` directory a path lies in (the outermost), or the path itself. */
export function npmInstallOf(path: string): string {
  const at = path.indexOf("/node_modules/");
  return at < 0 ? path : path.slice(0, at + "/node_modules".length);
}
