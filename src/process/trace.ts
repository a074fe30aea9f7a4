import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { shellQuote } from "./shell-words.js";

/**
 * What a command read, measured (issue 55 §2, DESIGN §6 "The verdict tree"): the files a tests run, a
 * check or a whole-tree gate opens are traced with strace, so the verdict knows which files judge the work
 * without guessing from their names. Only successful opens and executions are traced (`--seccomp-bpf`:
 * no other system call stops the process), and only their paths are kept.
 */

let found: string | null | undefined;

/** The strace program, or undefined when this machine has none (the caller says so; nothing is traced). */
export function tracer(): string | undefined {
  if (found === undefined) {
    const fromPath = (process.env.PATH ?? "").split(":").map((dir) => join(dir, "strace"));
    const candidate = [...fromPath, "/usr/bin/strace"].find((path) => isAbsolute(path) && existsSync(path));
    // One start proves it runs here (a seccomp filter of the machine's own could refuse ptrace).
    found = candidate && spawnSync(candidate, ["-f", "-qq", "--seccomp-bpf", "-e", "trace=openat", "-o", "/dev/null", "true"], { stdio: "ignore", timeout: 10_000 }).status === 0 ? candidate : null;
  }
  return found ?? undefined;
}

/** strace could not trace a command here (ptrace refused inside the sandbox): nothing is traced from now on. */
export function untraceable(): void {
  found = null;
}

/** Pure: `command` run under strace, its successful opens and executions written to `output`. */
export function tracedCommand(strace: string, command: string, output: string): string {
  const options = ["-f", "-qq", "-y", "--seccomp-bpf", "-e", "trace=open,openat,openat2,execve,execveat", "-e", "status=successful", "-o", output];
  return `${shellQuote(strace)} ${options.map(shellQuote).join(" ")} /bin/sh -c ${shellQuote(command)}`;
}

/**
 * Pure: the files under `root` that a trace shows read or executed, as paths relative to it, sorted. An
 * open for writing only is not a read; a directory's path is kept too (the caller keeps what it tracks).
 */
export function tracedReads(trace: string, root: string, cwd: string = root): string[] {
  const reads = new Set<string>();
  for (const line of trace.split("\n")) {
    let path: string | undefined;
    const opened = /\bopen(?:at2?)?\(.*\)\s+= \d+<((?:[^>\\]|\\.)*)>\s*$/.exec(line) ?? /<\.\.\. open(?:at2?)? resumed>.*= \d+<((?:[^>\\]|\\.)*)>\s*$/.exec(line);
    if (opened) {
      if (/\bO_WRONLY\b/.test(line)) continue;
      path = unescapedPath(opened[1] ?? "");
    } else {
      const executed = /\bexecve(?:at)?\((?:\d+<[^>]*>, )?"((?:[^"\\]|\\.)*)"/.exec(line);
      if (executed && /= 0\s*$/.test(line)) path = unescapedPath(executed[1] ?? "");
    }
    if (!path) continue;
    const absolute = isAbsolute(path) ? path : join(cwd, path);
    const inside = relative(root, absolute);
    if (inside && !inside.startsWith("..") && !isAbsolute(inside)) reads.add(inside);
  }
  return [...reads].sort();
}

/** Pure: a path as strace escapes it (`\\n`, `\\x..`, `\\"`) back to its text. */
function unescapedPath(text: string): string {
  if (!text.includes("\\")) return text;
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const character = text[index] ?? "";
    if (character !== "\\") {
      bytes.push(...Buffer.from(character, "utf8"));
      continue;
    }
    const next = text[index + 1] ?? "";
    if (next === "x") {
      bytes.push(Number.parseInt(text.slice(index + 2, index + 4), 16));
      index += 3;
    } else if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(text.slice(index + 1))?.[0] ?? "0";
      bytes.push(Number.parseInt(octal, 8));
      index += octal.length;
    } else {
      bytes.push(({ n: 10, t: 9, r: 13, v: 11, f: 12 } as Record<string, number>)[next] ?? next.charCodeAt(0));
      index += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}
