import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { checkGitFile } from "./git-file.js";

/** An object git found by name: its id, type and exact bytes. */
export interface GitObject {
  oid: string;
  type: string;
  bytes: Buffer;
}

/** How long a reader with nothing to do stays: a packet's reads come in bursts. */
const IDLE_MS = 3000;

/**
 * One `git cat-file --batch` kept open per directory, answering names
 * (`<rev>`, `<rev>:<path>`) one after another: a packet's small reads (the
 * spec, the conventions, a file at a commit, where a branch points) cost a
 * line each instead of a process each. git resolves every name afresh, refs
 * included (a ref moved or packed by another process is seen), and finds
 * objects written since it started. It runs with `--no-replace-objects`:
 * what it reads is the object itself, whatever a replace ref says. The
 * process never keeps the factory alive: it is released while nothing is
 * asked and ends after three idle seconds.
 */
class ObjectReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { name: string; done: (object: GitObject | undefined) => void; fail: (error: Error) => void }[] = [];
  /** Bytes not yet answered: `buffer`, then `chunks` not yet joined to it; `received` in all. */
  private buffer: Buffer = Buffer.alloc(0);
  private readonly chunks: Buffer[] = [];
  private received = 0;
  /** How many bytes the answer being read needs in all (0: unknown). */
  private need = 0;
  private idle: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    cwd: string,
    args: readonly string[],
    private readonly onEnd: () => void,
  ) {
    this.child = spawn("git", ["--no-replace-objects", ...args, "cat-file", "--batch"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk: Buffer) => this.take(chunk));
    this.child.stderr.resume();
    this.child.stdin.on("error", () => undefined); // an exit closes the pipe; close says so
    this.child.on("error", (error) => this.end(error));
    this.child.on("close", (code) => this.end(new Error(`git cat-file --batch exited (${code ?? "killed"})`)));
    this.release();
  }

  ask(name: string): Promise<GitObject | undefined> {
    if (this.ended) return Promise.reject(new Error("git cat-file --batch has ended"));
    clearTimeout(this.idle);
    if (this.waiting.length === 0) this.hold();
    return new Promise((done, fail) => {
      this.waiting.push({ name, done, fail });
      this.child.stdin.write(`${name}\n`);
    });
  }

  private take(chunk: Buffer): void {
    // A large object arrives in many chunks: they are joined once it is whole, not at every chunk.
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.received < this.need) return;
    this.buffer = Buffer.concat([this.buffer, ...this.chunks.splice(0)]);
    this.received = this.buffer.length;
    this.need = 0;
    for (;;) {
      const next = this.waiting[0];
      if (!next) break;
      const parsed = parseAnswer(this.buffer);
      if ("need" in parsed) {
        this.need = parsed.need;
        break;
      }
      this.buffer = this.buffer.subarray(parsed.length);
      this.received = this.buffer.length;
      this.waiting.shift();
      next.done(parsed.object);
    }
    if (this.waiting.length === 0) this.release();
  }

  /** Keeps the process (and the factory) alive while an answer is awaited. */
  private hold(): void {
    this.child.ref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { ref?: () => void }).ref?.();
  }

  private release(): void {
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.close(), IDLE_MS);
    this.idle.unref();
  }

  close(): void {
    if (this.ended) return;
    this.end(new Error("git cat-file --batch was closed"));
    this.child.stdin.end();
  }

  private end(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idle);
    this.onEnd();
    for (const waiting of this.waiting.splice(0)) waiting.fail(error);
  }
}

/**
 * Pure: the first answer in `cat-file --batch` output, or how many bytes it
 * needs in all while it is incomplete. `<oid> <type> <size>\n<bytes>\n` is
 * an object; any other header line (`<name> missing`, `<name> ambiguous`)
 * names none.
 */
export function parseAnswer(buffer: Buffer): { object: GitObject | undefined; length: number } | { need: number } {
  const end = buffer.indexOf(0x0a);
  if (end < 0) return { need: buffer.length + 1 };
  const header = buffer.subarray(0, end).toString("utf8");
  const match = /^([0-9a-f]+) (\w+) (\d+)$/.exec(header);
  if (!match) return { object: undefined, length: end + 1 };
  const length = end + 1 + Number(match[3]) + 1;
  if (buffer.length < length) return { need: length };
  return { object: { oid: match[1] as string, type: match[2] as string, bytes: Buffer.from(buffer.subarray(end + 1, length - 1)) }, length };
}

const readers = new Map<string, ObjectReader>();

/**
 * The object `name` names, read in `cwd` through its kept-open reader;
 * undefined when git finds none. A name git's batch protocol cannot carry
 * (a line break) is refused, and a read is refused when the reader ends
 * before answering: the caller asks git the usual way instead.
 */
export async function readObject(cwd: string, args: readonly string[], name: string): Promise<GitObject | undefined> {
  if (/[\n\r]/.test(name)) throw new Error("a name with a line break cannot be read in a batch");
  let reader = readers.get(cwd);
  if (!reader) {
    checkGitFile(cwd);
    const made: ObjectReader = new ObjectReader(cwd, args, () => {
      if (readers.get(cwd) === made) readers.delete(cwd);
    });
    readers.set(cwd, made);
    reader = made;
  }
  return reader.ask(name);
}

/** Ends the reader kept open in `cwd`: its worktree is being removed or made again. */
export function closeObjectReader(cwd: string): void {
  readers.get(cwd)?.close();
}

/** Ends every kept-open reader (for tests that want no process left at once). */
export function closeObjectReaders(): void {
  for (const reader of [...readers.values()]) reader.close();
}
