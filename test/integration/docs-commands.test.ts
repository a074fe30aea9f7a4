import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

/**
 * Issue 41 §4: every command and flag the commands reference names exists in the CLI, and every command the
 * CLI has is in the reference: read from each command's own `--help`.
 */
const reference = readFileSync(new URL("../../docs/reference/commands.md", import.meta.url), "utf8");
/** Each row's first cell: `factory ledger verify [--json]`, `factory ledger export FILE` / `factory ledger import FILE`. */
const rows = [...reference.matchAll(/^\| (`factory [^|]*?(?:\\\|[^|]*?)*) \|/gm)].map((match) => match[1] ?? "");

/** Commands whose work is done by subcommands (`factory ledger verify`, `factory dev-postgres start|stop`). */
const GROUPS = new Set(["ledger", "dev-postgres"]);

interface Named {
  /** Each way of calling it the cell names: `["ledger", "verify"]`; `["dev-postgres", "start"]` and `[…, "stop"]`. */
  calls: string[][];
  flags: string[];
}

function named(cell: string): Named[] {
  return [...cell.matchAll(/`factory ([^`]+)`/g)].map((match) => {
    const text = match[1] ?? "";
    const [first = "", second = ""] = text.split(/\s+/);
    const calls = GROUPS.has(first) ? second.split("\\|").map((sub) => [first, sub]) : [[first]];
    return { calls, flags: [...text.matchAll(/(--[a-z][a-z-]*)/g)].map((flag) => flag[1] ?? "") };
  });
}

describe("the commands reference", () => {
  it("names only commands and flags the CLI has, and every command it has", () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      for (const { calls, flags } of named(row)) {
        const helps: string[] = [];
        for (const command of calls) {
          seen.add(command[0] ?? "");
          const help = runCli([...command, "--help"], process.cwd());
          if (help.code !== 0) problems.push(`factory ${command.join(" ")}: no such command (${help.stderr.trim().split("\n")[0]})`);
          else helps.push(help.stdout);
        }
        for (const flag of flags) if (helps.length && !helps.some((help) => help.includes(flag))) problems.push(`factory ${calls[0]?.join(" ")}: no flag ${flag}`);
      }
    }
    expect(problems).toEqual([]);
    const listed = [...runCli(["--help"], process.cwd()).stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((match) => match[1] ?? "").filter((name) => name !== "help");
    expect(listed.length).toBeGreaterThan(15);
    expect(listed.filter((name) => !seen.has(name))).toEqual([]);
  });
});
