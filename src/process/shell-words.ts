import { isAbsolute } from "node:path";

/** Pure: how `sh -c` splits a command line into words and operators, as far as the factory needs to know. */
export interface Word {
  text: string;
  /** An operator (`&&`, `;`, `||`, `|`), not a word. */
  operator: boolean;
  /** The word began with a quote (so `"A=1"` is a program name, not an assignment). */
  quotedStart: boolean;
}

/** The words and operators of a command line, quotes removed; undefined when a quote is not closed. */
export function shellWords(line: string): Word[] | undefined {
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

/** Pure: the words of a command line that are absolute paths (a tool, a script, its input), in order. */
export function absolutePathsIn(line: string): string[] {
  return (shellWords(line) ?? []).filter((word) => !word.operator && isAbsolute(word.text)).map((word) => word.text);
}

/** A word quoted for `sh -c` (as it is when nothing in it needs quoting). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
