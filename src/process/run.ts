import { createWriteStream, readFileSync, type WriteStream } from "node:fs";
import { execa } from "execa";
import { openSandbox, type SandboxRequest } from "./sandbox.js";

/**
 * The only module that starts processes. Every child runs in its own process
 * group, so a timeout or an interrupt kills the whole tree (an agent's
 * shell, its test runner, their children), not just the direct child.
 */
export interface RunRequest {
  /** A shell command line (run with /bin/sh -c). */
  command: string;
  cwd: string;
  /** The complete environment: nothing is inherited unless given here. */
  env: Record<string, string | undefined>;
  input?: string;
  timeoutMs: number;
  /** Kill when no output arrives for this long. */
  idleTimeoutMs?: number;
  /** Stdout and stderr, interleaved, are also written here in full. */
  logFile?: string;
  signal?: AbortSignal;
  /** Run inside bubblewrap with these places (DESIGN §12); undefined: as a plain child. */
  sandbox?: SandboxRequest;
  /** The command line whose paths the sandbox shows, when `command` wraps it (a traced run: process/trace.ts). */
  wraps?: string;
}

export type RunOutcome =
  | { kind: "exited"; code: number; stdout: string; stderr: string; tail: string; durationMs: number }
  | { kind: "signalled"; signal: string; stdout: string; stderr: string; tail: string; durationMs: number }
  | { kind: "timed-out"; stdout: string; stderr: string; tail: string; durationMs: number }
  | { kind: "stalled"; stdout: string; stderr: string; tail: string; durationMs: number }
  | { kind: "aborted"; stdout: string; stderr: string; tail: string; durationMs: number }
  | { kind: "spawn-error"; message: string; durationMs: number };

const TAIL_LINES = 40;
const TAIL_CHARS = 8_000;
const KILL_GRACE_MS = 2_000;
const OUTPUT_GRACE_MS = 2_000;
const NAMESPACE_END_MS = 10_000;
/** The descriptor bwrap writes `{"child-pid": N}` to: the outside pid of the namespace's PID 1. */
const INFO_FD = 3;

export async function runCommand(request: RunRequest): Promise<RunOutcome> {
  const started = Date.now();
  let log: WriteStream | undefined;
  if (request.logFile) log = createWriteStream(request.logFile, { flags: "a" });

  const sandbox = request.sandbox ? openSandbox(request.sandbox, request.command, request.cwd, request.env, request.wraps) : undefined;
  try {
    return await runChild(request, sandbox?.file ?? request.command, sandbox?.args, sandbox?.env ?? request.env, started, log, sandbox?.seccomp);
  } finally {
    sandbox?.close();
  }
}

async function runChild(
  request: RunRequest,
  file: string,
  args: string[] | undefined,
  env: Record<string, string | undefined>,
  started: number,
  log: WriteStream | undefined,
  /** A seccomp filter bwrap reads from descriptor 4 (sandbox.ts's SECCOMP_FD), written to it through a pipe. */
  filter?: Uint8Array,
): Promise<RunOutcome> {
  let stopReason: "timed-out" | "stalled" | "aborted" | undefined;
  const options = {
    shell: args === undefined,
    cwd: request.cwd,
    env,
    extendEnv: false,
    input: request.input ?? "",
    reject: false,
    detached: true, // its own process group: see killGroup
    stripFinalNewline: false,
    maxBuffer: 64 * 1024 * 1024,
    encoding: "utf8",
  } as const;
  // Sandboxed, bwrap reports the namespace's PID 1 on an extra pipe: its end is the end of every process in it.
  const sandboxed = args !== undefined;
  const bwrapArgs = sandboxed ? ["--info-fd", String(INFO_FD), ...args] : [];
  const child = !sandboxed
    ? execa(file, options)
    : filter === undefined
      ? execa(file, bwrapArgs, { ...options, stdio: ["pipe", "pipe", "pipe", "pipe"] })
      : execa(file, bwrapArgs, { ...options, stdio: ["pipe", "pipe", "pipe", "pipe", filter] });
  let namespaceInit: number | undefined;
  if (sandboxed) {
    let info = "";
    child.stdio[INFO_FD]?.on("data", (chunk: Buffer | string) => {
      info += String(chunk);
      const match = /"child-pid":\s*(\d+)/.exec(info);
      if (match) namespaceInit = Number(match[1]);
    });
  }
  // A process that left the group (setsid) may still hold stdout after the
  // direct child exited; unsandboxed, nothing kills it, so stop waiting for
  // its output instead of waiting for it forever.
  let detachedOutput: NodeJS.Timeout | undefined;
  child.on("exit", () => {
    detachedOutput = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, OUTPUT_GRACE_MS);
  });

  const killGroup = (reason: "timed-out" | "stalled" | "aborted"): void => {
    if (stopReason) return;
    stopReason = reason;
    signalGroup(child.pid, "SIGTERM");
    setTimeout(() => signalGroup(child.pid, "SIGKILL"), KILL_GRACE_MS).unref();
  };
  const hardTimer = setTimeout(() => killGroup("timed-out"), request.timeoutMs);
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    if (!request.idleTimeoutMs) return;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => killGroup("stalled"), request.idleTimeoutMs);
  };
  armIdle();
  const onData = (chunk: Buffer | string): void => {
    armIdle();
    log?.write(chunk);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const onAbort = (): void => killGroup("aborted");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted) onAbort();

  const result = await child;
  clearTimeout(hardTimer);
  clearTimeout(detachedOutput);
  if (idleTimer) clearTimeout(idleTimer);
  request.signal?.removeEventListener("abort", onAbort);
  // The direct child is gone; make sure nothing it started outlives it.
  signalGroup(child.pid, "SIGKILL");
  if (namespaceInit) await endNamespace(namespaceInit);
  if (log) await new Promise<void>((resolve) => log?.end(resolve));

  const durationMs = Date.now() - started;
  const stdout = String(result.stdout ?? "");
  const stderr = String(result.stderr ?? "");
  const tail = tailOf(`${stdout}${stderr ? `\n${stderr}` : ""}`);
  if (stopReason) return { kind: stopReason, stdout, stderr, tail, durationMs };
  if (result.failed && result.exitCode === undefined && !result.signal) {
    return { kind: "spawn-error", message: result.shortMessage ?? result.message ?? "the process could not start", durationMs };
  }
  if (result.signal) return { kind: "signalled", signal: result.signal, stdout, stderr, tail, durationMs };
  return { kind: "exited", code: result.exitCode ?? 0, stdout, stderr, tail, durationMs };
}

/**
 * Kills a sandbox's PID 1 if it outlived bwrap and waits until it is gone:
 * the kernel reaps every other process of the namespace before its PID 1, so
 * when this returns nothing of the call is left running.
 */
async function endNamespace(pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  };
  for (let waited = 0; alive() && waited < NAMESPACE_END_MS; waited += 20) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      return; // gone, or no longer ours
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** The last lines of a command's output, at most TAIL_CHARS of them: a gate's output must not grow the ledger or feedback without bound. */
export function tailOf(text: string, lines = TAIL_LINES): string {
  const all = stripTerminalEscapes(text).trimEnd().split("\n");
  const tail = all.slice(-lines).join("\n");
  return tail.length <= TAIL_CHARS ? tail : `[… ${tail.length - TAIL_CHARS} characters cut]${tail.slice(-TAIL_CHARS)}`;
}

/** Pure: text without terminal escape sequences (colors, cursor moves, titles): what feedback, the ledger and reports carry. */
export function stripTerminalEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, "");
}

/** One line describing how a process ended, for reports and feedback. */
export function describeOutcome(outcome: RunOutcome): string {
  switch (outcome.kind) {
    case "exited":
      return `exited with code ${outcome.code}`;
    case "signalled":
      return `killed by ${outcome.signal}`;
    case "timed-out":
      return "timed out and was killed";
    case "stalled":
      return "printed nothing for too long and was killed";
    case "aborted":
      return "was interrupted";
    case "spawn-error":
      return `could not start: ${outcome.message}`;
  }
}

/**
 * Where the machine keeps the certificate authorities it trusts (a company proxy's): paths, no secret. A
 * Node.js that bundles its own authorities (the official builds of 22 and 24) trusts the machine's only
 * through NODE_EXTRA_CA_CERTS; without it an install behind such a proxy fails (SELF_SIGNED_CERT_IN_CHAIN).
 */
const TRUST = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO"];

/** The minimal environment every child gets: enough to find tools, a home, and the machine's trusted authorities. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ", ...TRUST]) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  env.NO_COLOR = "1";
  env.CI = "1";
  return env;
}
