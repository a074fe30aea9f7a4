import { readFileSync } from "node:fs";

/** Variables that mark an agent's or a factory attempt's process. */
export const AGENT_VARIABLES = ["FACTORY_ROLE", "FACTORY_PACKET", "CLAUDECODE", "CODEX_SANDBOX", "GEMINI_CLI"];

/**
 * The first ancestor of `pid` (on Linux, through /proc) that is an agent or
 * a factory run: one whose environment carries an agent variable, or whose
 * command line is `factory … run`. A child that dropped those variables from
 * its own environment still has its parent's. Undefined where /proc cannot
 * be read (another OS): the environment checks alone apply there.
 */
export function agentAncestor(pid: number = process.ppid): string | undefined {
  const seen = new Set<number>();
  for (let current = pid; current > 1 && !seen.has(current); current = parentOf(current) ?? 0) {
    seen.add(current);
    const environ = readProc(current, "environ");
    const variable = AGENT_VARIABLES.find((name) => environ?.split("\0").some((entry) => entry.startsWith(`${name}=`)));
    if (variable) return `process ${current} has ${variable} set`;
    const argv = readProc(current, "cmdline")?.split("\0") ?? [];
    const factory = argv.findIndex((arg) => /(^|\/)factory(\.js)?$/.test(arg));
    if (factory >= 0 && argv.slice(factory + 1).includes("run")) return `process ${current} is a factory run`;
  }
  return undefined;
}

function parentOf(pid: number): number | undefined {
  const status = readProc(pid, "status");
  const match = status ? /^PPid:\s+(\d+)/m.exec(status) : null;
  return match ? Number(match[1]) : undefined;
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return undefined;
  }
}
