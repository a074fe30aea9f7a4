import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { Agent } from "../config/types.js";
import { shellWords } from "../process/shell-words.js";

/**
 * The program an agent starts: `bin` for the CLI kinds, the first program of `run` for a command agent;
 * `~/` expanded. Undefined when a command agent's line has no single program to check.
 */
export function agentProgram(agent: Pick<Agent, "kind" | "bin" | "run">, home: string = homedir()): string | undefined {
  const program = agent.kind === "command" ? shellProgram(agent.run ?? "") : (agent.bin ?? agent.kind);
  return program?.startsWith("~/") ? join(home, program.slice(2)) : program;
}

/** The absolute path of an agent's program when it is configured by one (not found through PATH). */
export function agentProgramPath(agent: Pick<Agent, "kind" | "bin" | "run">, root: string, home: string = homedir()): string | undefined {
  const program = agentProgram(agent, home);
  if (!program?.includes("/")) return undefined;
  return isAbsolute(program) ? program : join(root, program);
}

/**
 * Pure: the program a shell command line starts first, as `sh -c` will look it up: past variable
 * assignments (`FOO=1 node a.mjs`), `exec`, `env` and its assignments, `command`, `nohup`, and leading
 * `cd DIR &&` or `cd DIR;` steps. Undefined when the line starts with something that is not a plain
 * word (a subshell, a function, a redirection): there is no single program to check.
 */
export function shellProgram(line: string): string | undefined {
  const words = shellWords(line);
  if (words === undefined) return undefined;
  let at = 0;
  for (;;) {
    const word = words[at];
    if (word === undefined) return undefined;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word.text) && !word.quotedStart) at++;
    else if (word.text === "exec" || word.text === "command" || word.text === "nohup" || word.text === "env") at++;
    else if (word.text === "cd") {
      const end = words.findIndex((next, index) => index > at && (next.text === "&&" || next.text === ";") && next.operator);
      if (end < 0) return undefined;
      at = end + 1;
    } else if (word.operator || /^[(){}<>|&!]/.test(word.text)) return undefined;
    else return word.text;
  }
}
