import { shellQuote } from "../gates/paths.js";
import { type RunOutcome, type RunRequest, runCommand } from "../process/run.js";
import type { AgentOutcome } from "./types.js";

/**
 * Whether `program` is found and executable where an agent runs (the same sandbox, PATH and directory). A
 * script's interpreter (its `#!` line) must be there too, and through `env` the program it names: a
 * missing one is the shell's "not found" as well.
 */
export async function programIsThere(program: string, where: Pick<RunRequest, "cwd" | "env" | "sandbox">): Promise<boolean> {
  const quoted = shellQuote(program);
  const interpreter = `set -- $(head -n 1 "$p" | sed 's/^#! *//'); i=$1; [ -f "$i" ] && [ -x "$i" ] || exit 1; [ "\${i##*/}" = env ] || exit 0; shift; while [ "\${1#-}" != "$1" ]; do shift; done; [ -z "$1" ] || command -v "$1" >/dev/null`;
  const probe = `p=$(command -v ${quoted}) && [ -f "$p" ] && [ -x "$p" ] && { [ "$(head -c 2 "$p")" != "#!" ] || (${interpreter}); }`;
  const found = await runCommand({ command: probe, ...where, timeoutMs: 15_000 });
  return found.kind === "exited" && found.code === 0;
}

/**
 * An agent call that never started: the shell's 126 ("cannot execute") or 127 ("not found") with the
 * program not there where it ran. Any program may exit 126 or 127 on its own, so the program is looked
 * for again, in the same place; one that is there started and failed, which is the call's outcome.
 * Undefined when the call did start (or `program` is not one word to look for).
 */
export async function neverStarted(
  outcome: RunOutcome,
  program: string | undefined,
  where: Pick<RunRequest, "cwd" | "env" | "sandbox">,
): Promise<Pick<AgentOutcome, "status" | "neverStarted" | "detail"> | undefined> {
  if (outcome.kind !== "exited" || (outcome.code !== 126 && outcome.code !== 127) || program === undefined) return undefined;
  if (await programIsThere(program, where)) return undefined;
  const why = outcome.code === 127 ? "not found" : "not executable";
  return { status: "crashed", neverStarted: true, detail: `its program could not start where it runs (${why}, exit ${outcome.code}): ${outcome.tail.split("\n").slice(-3).join(" | ")}` };
}
