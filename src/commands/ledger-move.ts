import { existsSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { projectOf } from "../git/project.js";
import { foldLedger } from "../ledger/fold.js";
import { isPgLedger } from "../ledger/open.js";
import { bindProject } from "../ledger/pg-project.js";
import { OtherProjectError } from "../ledger/project.js";
import { describeBreak, parseLedger } from "../ledger/store.js";
import type { Output } from "../log/output.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { personName, refuseAgents } from "./packet-record.js";
import { loadHeadOrReport } from "./workspace.js";

/** `factory ledger migrate`: the PostgreSQL ledger's schema created or brought up to date. */
export async function ledgerMigrate(options: { cwd: string; output: Output }): Promise<ExitCode> {
  const { output } = options;
  const head = await loadHeadOrReport(options.cwd, output);
  if (!head) return EXIT.invalid;
  if (!isPgLedger(head.ledger)) {
    output.err(`factory ledger migrate: this repository's ledger is the file ${head.ledger.where}, which has no schema; set [ledger] url or FACTORY_LEDGER_URL to a PostgreSQL database first`);
    return EXIT.invalid;
  }
  try {
    const { from, to } = await head.ledger.migrate();
    output.out(from === to ? `${head.ledger.where}: the schema is up to date (version ${to})` : `${head.ledger.where}: migrated the schema from version ${from} to ${to}`);
    const project = await projectOf(head.root, head.branch, head.config?.target.remote);
    const { bound } = await bindProject(head.ledger, project, `factory ledger migrate by ${await personName(head.root)}`);
    if (bound) output.out(`${head.ledger.where}: serves this project from now on (root ${[...project.roots].sort()[0]?.slice(0, 12)}, branch ${project.branch}, remote ${project.remote ?? "none"})`);
    return EXIT.ok;
  } catch (error) {
    output.err(`factory ledger migrate${error instanceof OtherProjectError ? " refused" : ""}: ${error instanceof Error ? error.message : String(error)}`);
    return error instanceof OtherProjectError ? EXIT.invalid : EXIT.halted;
  } finally {
    await head.ledger.close();
  }
}

/** `factory ledger export FILE`: the ledger's lines exactly as stored, its chain verified first. */
export async function ledgerExport(options: { cwd: string; output: Output; file: string }): Promise<ExitCode> {
  const { output } = options;
  const head = await loadHeadOrReport(options.cwd, output);
  if (!head) return EXIT.invalid;
  try {
    const lines = await head.ledger.lines();
    const read = parseLedger(lines.map((line) => `${line}\n`).join(""));
    const broken = describeBreak(read);
    if (broken) {
      output.err(`factory ledger export refused: ${head.ledger.where}: ${broken}. Nothing was written.`);
      return EXIT.halted;
    }
    const text = lines.map((line) => `${line}\n`).join("");
    if (options.file === "-") {
      output.out(text.trimEnd());
    } else {
      const path = resolve(options.cwd, options.file);
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(path, "wx");
      } catch (error) {
        output.err(
          `factory ledger export: ${options.file}: ${(error as NodeJS.ErrnoException).code === "EEXIST" ? "exists already; name a new file" : (error as Error).message}. Nothing was written.`,
        );
        return EXIT.invalid;
      }
      try {
        await handle.writeFile(text, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      const state = foldLedger(read.events);
      output.err(
        `exported ${lines.length} event(s) of ${head.ledger.where} to ${options.file}: ${state.packets.size} packet(s), ${state.runs.size} run(s), $${state.costUsd.toFixed(2)}; the chain holds`,
      );
    }
    return EXIT.ok;
  } finally {
    if (isPgLedger(head.ledger)) await head.ledger.close();
  }
}

/**
 * `factory ledger import FILE`: a person's command. The file's chain is
 * verified, its lines written exactly into this repository's ledger (which
 * must hold no event), and the ledger read back and verified: the same
 * events, the same state, the chain unbroken.
 */
export async function ledgerImport(options: { cwd: string; output: Output; file: string; env: NodeJS.ProcessEnv }): Promise<ExitCode> {
  const { output } = options;
  const refusal = refuseAgents(options.cwd, options.env);
  if (refusal) {
    output.err(`factory ledger import refused: ${refusal}.`);
    return EXIT.invalid;
  }
  const head = await loadHeadOrReport(options.cwd, output);
  if (!head) return EXIT.invalid;
  try {
    const path = resolve(options.cwd, options.file);
    if (!existsSync(path)) {
      output.err(`factory ledger import: ${options.file}: no such file. Nothing was imported.`);
      return EXIT.invalid;
    }
    const text = await readFile(path, "utf8");
    const read = parseLedger(text, (number) => `${options.file}:${number}`);
    const lines = text.split("\n").filter((line) => line !== "");
    const problems = [describeBreak(read), ...read.warnings, ...(text !== "" && !text.endsWith("\n") ? ["its last line has no newline (cut off?)"] : [])].filter(Boolean);
    if (problems.length > 0) {
      for (const problem of problems) output.err(String(problem));
      output.err("factory ledger import refused: the file is not a whole, unbroken ledger (write it with `factory ledger export`). Nothing was imported.");
      return EXIT.invalid;
    }
    const written = await head.ledger.importLines(lines);
    if (!written.ok) {
      output.err(`factory ledger import refused: ${written.reason}. Nothing was imported.`);
      return EXIT.invalid;
    }
    const back = await head.ledger.verify();
    const expected = foldLedger(read.events);
    for (const record of expected.packets.values()) delete (record as { events?: unknown }).events;
    const same = (await head.ledger.lines()).join("\n") === lines.join("\n") && JSON.stringify([...back.state.packets]) === JSON.stringify([...expected.packets]);
    if (back.broken || !same) {
      output.err(`factory ledger import: ${head.ledger.where} does not read back as the file did${back.broken ? `: ${describeBreak(back)}` : ""}; compare it with \`factory ledger verify\``);
      return EXIT.halted;
    }
    output.out(`imported ${lines.length} event(s) into ${head.ledger.where}: ${back.state.packets.size} packet(s), $${back.state.costUsd.toFixed(2)}; the chain holds on both sides`);
    return EXIT.ok;
  } finally {
    if (isPgLedger(head.ledger)) await head.ledger.close();
  }
}
