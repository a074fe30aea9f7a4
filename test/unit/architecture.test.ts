import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * How src/ is built (issue 58 §2), read with TypeScript's own parser: the directories stand on floors, each
 * importing only from its own floor and those below; no two files import each other. The few imports that
 * still run back up are listed here by name: a new one fails this test until it is moved or listed (and said).
 */
const SRC = fileURLToPath(new URL("../../src", import.meta.url));
const FLOORS: readonly (readonly string[])[] = [
  ["util", "toml"],
  ["process", "git", "log"],
  ["config", "packet", "ledger", "gates", "guards", "agents", "review"],
  ["loop", "merge", "planning", "forge"],
  ["status", "doctor", "mcp"],
  ["commands"],
];
/** Each runs back up for a reason of its own: moving the constant would only scatter its one owner. */
const UPWARD_KNOWN = [
  "git/locks.ts -> ledger/run-lock.ts", // the run lock's file is what git's stale-lock check reads
  "git/trailers.ts -> ledger/scan.ts", // the landed-packets cache lives in the state directory
  "loop/notify.ts -> status/board-url.ts", // a notification links the board
  "mcp/server.ts -> commands/exit-codes.ts", // the MCP tools answer with the commands' exit codes
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []));
}

/** Every file of src/ and the files of src/ it imports or re-exports from (type-only imports too). */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const parsed = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
    const targets = new Set<string>();
    for (const statement of parsed.statements) {
      const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith(".")) targets.add(relative(SRC, resolve(dirname(file), specifier.text.replace(/\.js$/, ".ts"))));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

const floorOf = (file: string): number => FLOORS.findIndex((floor) => floor.includes(file.split("/")[0] ?? ""));

describe("how src/ is built", () => {
  const graph = importGraph();

  it("every directory of src/ stands on a floor", () => {
    const directories = new Set([...graph.keys()].filter((file) => file.includes("/")).map((file) => file.split("/")[0]));
    expect([...directories].filter((directory) => floorOf(`${directory}/`) < 0)).toEqual([]);
  });

  it("no two files import each other", () => {
    const pairs = [...graph].flatMap(([file, targets]) => [...targets].filter((target) => file < target && graph.get(target)?.has(file)).map((target) => `${file} <-> ${target}`));
    expect(pairs).toEqual([]);
  });

  it("imports run down or across a floor, but for the few listed", () => {
    const upward = [...graph].flatMap(([file, targets]) => [...targets].filter((target) => floorOf(file) >= 0 && floorOf(target) > floorOf(file)).map((target) => `${file} -> ${target}`));
    expect(upward.sort()).toEqual([...UPWARD_KNOWN].sort());
    expect(UPWARD_KNOWN.length).toBeLessThanOrEqual(4);
  });

  it("no function of src/ is over 100 lines: a long one is split into the steps it performs", () => {
    const long: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const parsed = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node)) {
          const lines = parsed.getLineAndCharacterOfPosition(node.getEnd()).line - parsed.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          if (lines > MAX_FUNCTION_LINES) long.push(`${relative(SRC, file)}:${parsed.getLineAndCharacterOfPosition(node.getStart()).line + 1} (${lines} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(parsed);
    }
    expect(long).toEqual([]);
  });
});

/** Issue 58: a function longer than this is read as one block; its steps want names. */
const MAX_FUNCTION_LINES = 100;
