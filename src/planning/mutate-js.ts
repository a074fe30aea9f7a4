/** One simple change to one line of a source file. */
export interface Mutant {
  file: string;
  line: number;
  description: string;
  /** The whole file with the change. */
  source: string;
}

/** Operators flipped where they stand between spaces (as formatted code writes them; a generic's `<` or a unary `-` never does). */
const FLIPS: Record<string, string> = {
  "===": "!==",
  "!==": "===",
  "==": "!=",
  "!=": "==",
  "<=": ">",
  ">=": "<",
  "<": ">=",
  ">": "<=",
  "&&": "||",
  "||": "&&",
  "+": "-",
  "-": "+",
  "*": "/",
  "/": "*",
};
const OPERATOR = / (===|!==|==|!=|<=|>=|&&|\|\||[<>+\-*/]) /g;
const NUMBER = /(?<![\w$.])\d+(?:\.\d+)?(?![\w$.])/g;
const BOOLEAN = /(?<![\w$.])(true|false)(?![\w$])/g;
/** Statements whose removal makes the file not run at all, or changes nothing: never dropped. */
const KEPT = /^(import|export|const|let|var|function|class|async function|case|default|else|try|catch|finally|\}|\{|\/\/)/;

/**
 * Pure: the mutants of the given lines of a JavaScript or TypeScript file:
 * each flips one operator, changes one number or boolean, or drops one
 * statement ending in `;` (or a `return`). Strings, template literals and
 * comments are never changed: the file is masked before it is searched.
 */
export function jsMutants(file: string, text: string, lines: ReadonlySet<number>): Mutant[] {
  const masked = maskNonCode(text).split("\n");
  const original = text.split("\n");
  const mutants: Mutant[] = [];
  const withLine = (at: number, replaced: string, description: string): void => {
    const copy = [...original];
    copy[at] = replaced;
    mutants.push({ file, line: at + 1, description, source: copy.join("\n") });
  };
  masked.forEach((code, at) => {
    if (!lines.has(at + 1)) return;
    const line = original[at] ?? "";
    for (const match of code.matchAll(OPERATOR)) {
      const operator = match[1] as string;
      const start = (match.index ?? 0) + 1;
      withLine(at, `${line.slice(0, start)}${FLIPS[operator]}${line.slice(start + operator.length)}`, `"${operator}" -> "${FLIPS[operator]}"`);
    }
    for (const match of code.matchAll(NUMBER)) {
      const start = match.index ?? 0;
      const value = Number(match[0]);
      withLine(at, `${line.slice(0, start)}${value + 1}${line.slice(start + match[0].length)}`, `${match[0]} -> ${value + 1}`);
    }
    for (const match of code.matchAll(BOOLEAN)) {
      const start = match.index ?? 0;
      const flipped = match[0] === "true" ? "false" : "true";
      withLine(at, `${line.slice(0, start)}${flipped}${line.slice(start + match[0].length)}`, `${match[0]} -> ${flipped}`);
    }
    const statement = code.trim();
    if ((statement.endsWith(";") || /^return\b/.test(statement)) && !KEPT.test(statement)) {
      withLine(at, `${line.match(/^\s*/)?.[0] ?? ""};`, "statement dropped");
    }
  });
  return mutants;
}

/**
 * Pure: `text` with the inside of every string, template literal and
 * comment replaced by spaces (same length, line breaks kept), so a search
 * for operators and numbers finds code only.
 */
export function maskNonCode(text: string): string {
  let out = "";
  let state: "code" | "line-comment" | "block-comment" | "'" | '"' | "`" = "code";
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    const next = text[at + 1];
    if (state === "code") {
      if (char === "/" && next === "/") state = "line-comment";
      else if (char === "/" && next === "*") state = "block-comment";
      else if (char === "'" || char === '"' || char === "`") {
        state = char;
        out += char;
        continue;
      }
      out += state === "code" ? char : " ";
      continue;
    }
    if (char === "\n") {
      if (state === "line-comment") state = "code";
      out += "\n";
      continue;
    }
    if ((state === "'" || state === '"' || state === "`") && char === "\\") {
      out += next === "\n" ? " \n" : "  ";
      at++;
      continue;
    }
    if (state === "block-comment" && char === "*" && next === "/") {
      out += "  ";
      at++;
      state = "code";
      continue;
    }
    if (state === char) {
      state = "code";
      out += char;
      continue;
    }
    out += " ";
  }
  return out;
}

/** Pure: at most `budget` of `items`, spread evenly over them (every line of a change gets its share), in order. */
export function sampleEvenly<T>(items: readonly T[], budget: number): T[] {
  if (items.length <= budget) return [...items];
  if (budget <= 0) return [];
  return Array.from({ length: budget }, (_, index) => items[Math.floor((index * items.length) / budget)] as T);
}
