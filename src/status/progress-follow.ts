import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { RUNS_DIR } from "../loop/context.js";
import { progressStep } from "./board-page.js";

/**
 * The newest run's progress log (`.factory/runs/run-<start>.log`, the JSON
 * lines the run prints as terminal lines), read on from where the last read
 * ended: the finer steps of each attempt in flight (worktree, baseline,
 * planting, the implementer, the commit, gates, a re-gate) that the ledger
 * does not record. Keyed `<packet>#<attempt>`.
 */
export class ProgressFollower {
  private file: string | undefined;
  private offset = 0;
  private rest = "";
  private size = -1;
  readonly steps = new Map<string, string>();

  constructor(private readonly root: string) {}

  /** The newest run log's path, or undefined before any run. */
  private newest(): string | undefined {
    const dir = join(this.root, RUNS_DIR);
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => /^run-.*\.log$/.test(name));
    } catch {
      return undefined;
    }
    const name = names.sort().at(-1); // named by the run's start time: the last in order is the newest
    return name ? join(dir, name) : undefined;
  }

  /** Whether the newest log is another file, or has grown, since the last read. */
  changed(): boolean {
    const file = this.newest();
    return file !== this.file || (file !== undefined && existsSync(file) && statSync(file).size !== this.size);
  }

  read(): void {
    const file = this.newest();
    if (file !== this.file) {
      this.file = file;
      this.offset = 0;
      this.rest = "";
      this.steps.clear();
    }
    if (!file || !existsSync(file)) return;
    const size = statSync(file).size;
    this.size = size;
    if (size <= this.offset) return;
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(size - this.offset);
      const read = readSync(fd, buffer, 0, buffer.length, this.offset);
      this.offset += read;
      const lines = (this.rest + buffer.subarray(0, read).toString("utf8")).split("\n");
      this.rest = lines.pop() ?? "";
      for (const line of lines) this.take(line);
    } finally {
      closeSync(fd);
    }
  }

  private take(line: string): void {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return; // not one of the run's lines
    }
    const step = progressStep(event);
    if (step) this.steps.set(`${step.packet}#${step.attempt}`, step.step);
  }
}
