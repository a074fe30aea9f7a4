import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * Git processes started by small kept-open `/bin/sh` processes instead of by
 * node. Node 20's spawn forks the whole node process: each start blocked the
 * event loop 5–8 ms on the development VM, and every page the process wrote
 * afterwards took a copy-on-write fault (109,000 faults in a 10-packet run).
 * A shell is small: it forks and execs git in about 2 ms. `git rev-parse
 * HEAD` from a node process with a 100 MB heap: 13.2 ms a call, 8.4 ms of it
 * with the event loop blocked, against 7.7 ms and 0.5 ms through a shell.
 *
 * Each shell runs one git at a time: node writes the call as a small script
 * (`cd`, the environment as node has it now, `exec git` with every argument
 * quoted) into the shell's own temporary directory and sends its number; the
 * shell runs it with stdin from /dev/null and stdout and stderr to files
 * there, and answers with the number and the exit code. The three files keep
 * their names from call to call, rewritten each time: making and removing
 * three files a call cost about 1 ms of node's main thread alone here (a new
 * file on this ext4 takes 0.87 ms to write, an existing one 0.13 ms). Calls
 * at the same time go to other shells (up to MAX_SHELLS, then they wait). A shell is in a
 * session of its own, so a terminal's Ctrl-C does not cut a git command
 * short; it ends when its stdin closes (this process exits, however it
 * exits) and removes its directory as it goes.
 */
export interface Launched {
  code: number;
  stdout: string;
  stderr: string;
}

const MAX_SHELLS = 16;
/**
 * The shell's loop. SIGPIPE is ignored by the shell alone (the call's
 * subshell sets it back, as git itself does at start): an answer written
 * after this process died must end the loop, and the directory with it, not
 * kill the shell before it removes the directory.
 */
const SHELL_LOOP = 'D=$1; trap "" PIPE; while IFS= read -r id; do (trap - PIPE; . "$D/call.sh") </dev/null >"$D/call.out" 2>"$D/call.err"; echo "$id $?" || break; done; command -p rm -rf "$D"';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Job {
  cwd: string;
  args: readonly string[];
  done(result: Launched | Error): void;
}

interface Shell {
  child: ChildProcess;
  dir: string;
  /** The environment it was started with: each call's script sets what differs now. */
  env: NodeJS.ProcessEnv;
  job: { id: string; job: Job } | undefined;
  pending: string;
}

/** No git ran: the shell could not be started (the caller starts git itself). */
export class ShellUnavailable extends Error {}

const shells: Shell[] = [];
const waiting: Job[] = [];
let calls = 0;
let broken = false;

/**
 * `git <args>` in `cwd` through a shell; undefined when it cannot go that way
 * (no /bin/sh), and a ShellUnavailable rejection when a shell could not be
 * started or cannot set the environment as it is now: the caller starts git
 * itself then (no git ran).
 */
export function launchGit(cwd: string, args: readonly string[]): Promise<Launched> | undefined {
  if (broken || process.platform === "win32") return undefined;
  return new Promise<Launched | Error>((done) => {
    waiting.push({ cwd: resolve(cwd), args, done }); // against this process's directory now, as spawn would
    pump();
  }).then((result) => {
    if (result instanceof Error) throw result;
    return result;
  });
}

/** Ends every shell (their stdin closes; each removes its directory): for tests. */
export function closeGitShells(): Promise<void> {
  const closing = shells.splice(0);
  const ending = closing.map((shell) => new Promise<void>((resolve) => (shell.child.exitCode === null && shell.child.signalCode === null ? shell.child.once("exit", () => resolve()) : resolve())));
  for (const shell of closing) shell.child.stdin?.end();
  return Promise.all(ending).then(() => undefined);
}

function pump(): void {
  while (waiting.length > 0) {
    const shell = shells.find((candidate) => candidate.job === undefined) ?? (shells.length < MAX_SHELLS && !broken ? startShell() : undefined);
    if (!shell) {
      // No shell will come (none could start): the callers start git themselves.
      if (broken && shells.length === 0) for (const job of waiting.splice(0)) job.done(new ShellUnavailable("no shell could be started"));
      return;
    }
    const job = waiting.shift() as Job;
    const id = String(++calls);
    const text = script(job, shell.env);
    if (text === undefined) {
      job.done(new ShellUnavailable("a variable of the environment has a name a shell cannot set"));
      continue;
    }
    try {
      writeFileSync(join(shell.dir, "call.sh"), text);
    } catch (error) {
      job.done(new ShellUnavailable((error as Error).message));
      continue;
    }
    shell.job = { id, job };
    (shell.child.stdout as Socket).ref(); // an answer is awaited: the process stays up for it
    shell.child.stdin?.write(`${id}\n`);
  }
}

/** Pure: the script of one call, for a shell started with `from`; undefined when a variable that changed has a name no shell can set. */
export function script(job: Pick<Job, "cwd" | "args">, from: NodeJS.ProcessEnv, to: NodeJS.ProcessEnv = process.env): string | undefined {
  const lines = [`cd -- ${quote(job.cwd)} || exit`];
  const changed = [...Object.keys(from).filter((name) => to[name] === undefined), ...Object.keys(to).filter((name) => to[name] !== undefined && from[name] !== to[name])];
  if (changed.some((name) => !NAME.test(name))) return undefined;
  for (const name of Object.keys(from)) if (to[name] === undefined) lines.push(`unset ${name}`);
  for (const [name, value] of Object.entries(to)) if (value !== undefined && from[name] !== value) lines.push(`export ${name}=${quote(value)}`);
  // `cd` sets PWD and OLDPWD; git gets them as node would have passed them.
  for (const name of ["PWD", "OLDPWD"]) lines.push(to[name] === undefined ? `unset ${name}` : `export ${name}=${quote(to[name] as string)}`);
  lines.push(`exec git ${job.args.map(quote).join(" ")}`);
  return `${lines.join("\n")}\n`;
}

/** Pure: one shell word holding `text` as it is. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function startShell(): Shell | undefined {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), "factory-git-"));
  } catch {
    broken = true;
    return undefined;
  }
  const env = { ...process.env };
  const child = spawn("/bin/sh", ["-c", SHELL_LOOP, "sh", dir], { stdio: ["pipe", "pipe", "ignore"], env, detached: true });
  const shell: Shell = { child, dir, env, job: undefined, pending: "" };
  shells.push(shell);
  const leave = (why: string): void => {
    const at = shells.indexOf(shell);
    if (at >= 0) shells.splice(at, 1);
    rmSync(dir, { recursive: true, force: true });
    shell.job?.job.done(new Error(`the shell that starts git (pid ${child.pid ?? "?"}) ${why} while git ran`));
    shell.job = undefined;
    pump();
  };
  child.on("error", () => {
    broken = true; // no /bin/sh here: git is started directly from now on
    const current = shell.job;
    shell.job = undefined;
    current?.job.done(new ShellUnavailable("/bin/sh could not be started"));
    leave("could not start");
  });
  child.on("exit", (code, signal) => leave(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  child.stdin?.on("error", () => undefined); // a shell that died is reported by its exit
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    shell.pending += chunk;
    for (let end = shell.pending.indexOf("\n"); end >= 0; end = shell.pending.indexOf("\n")) {
      const line = shell.pending.slice(0, end);
      shell.pending = shell.pending.slice(end + 1);
      answer(shell, line);
    }
  });
  child.unref();
  (child.stdin as Socket | null)?.unref();
  (child.stdout as Socket).unref();
  return shell;
}

function answer(shell: Shell, line: string): void {
  const [id, code] = line.split(" ");
  const current = shell.job;
  if (!current || current.id !== id) return;
  shell.job = undefined;
  (shell.child.stdout as Socket).unref();
  const file = (extension: string): string => join(shell.dir, `call.${extension}`);
  let result: Launched | Error;
  try {
    result = { code: Number(code), stdout: readFileSync(file("out"), "utf8"), stderr: readFileSync(file("err"), "utf8") };
  } catch (error) {
    result = error as Error;
  }
  current.job.done(result);
  pump();
}
