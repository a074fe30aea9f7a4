import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { Agent } from "../config/types.js";

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
 * Pure: the absolute paths a command agent's line names besides its program (`node /opt/a.mjs /tmp/script.json`),
 * `~/` expanded: the files it reads, made visible inside the sandbox when they are files (never directories).
 */
export function agentNamedPaths(agent: Pick<Agent, "kind" | "run">, home: string = homedir()): string[] {
  if (agent.kind !== "command") return [];
  return (shellWords(agent.run ?? "") ?? [])
    .filter((word) => !word.operator)
    .map((word) => (word.text.startsWith("~/") ? join(home, word.text.slice(2)) : word.text))
    .filter((path) => isAbsolute(path));
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

interface Word {
  text: string;
  /** An operator (`&&`, `;`, `||`, `|`), not a word. */
  operator: boolean;
  /** The word began with a quote (so `"A=1"` is a program name, not an assignment). */
  quotedStart: boolean;
}

/** The words and operators of a command line, quotes removed; undefined when a quote is not closed. */
function shellWords(line: string): Word[] | undefined {
  const words: Word[] = [];
  let current: Word | undefined;
  let quote: string | undefined;
  const push = (): void => {
    if (current) words.push(current);
    current = undefined;
  };
  for (let at = 0; at < line.length; at++) {
    const char = line[at] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && at + 1 < line.length) current = { ...(current as Word), text: (current as Word).text + line[++at] };
      else current = { ...(current as Word), text: (current as Word).text + char };
      continue;
    }
    if (char === "'" || char === '"') {
      current ??= { text: "", operator: false, quotedStart: true };
      quote = char;
    } else if (/\s/.test(char)) {
      push();
    } else if (char === ";" || char === "&" || char === "|") {
      push();
      const double = line[at + 1] === char && char !== ";";
      words.push({ text: double ? char + char : char, operator: true, quotedStart: false });
      if (double) at++;
    } else if (char === "\\" && at + 1 < line.length) {
      current ??= { text: "", operator: false, quotedStart: false };
      current.text += line[++at];
    } else {
      current ??= { text: "", operator: false, quotedStart: false };
      current.text += char;
    }
  }
  if (quote) return undefined;
  push();
  return words;
}
