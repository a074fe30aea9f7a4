import { Command, CommanderError, Option } from "commander";
import { type ActionContext, COMMANDS, type CommandSpec, GROUPS, VERSION } from "./cli-commands.js";
import { EXIT } from "./commands/exit-codes.js";
import { processOutput } from "./log/output.js";
import { factoryHome } from "./loop/context.js";
import { lowSpace, resourceFault, resourceLine } from "./util/resources.js";

/**
 * The commander program, declared from the table of commands (cli-commands.ts). Each action calls one command
 * function; this file alone turns their results into the process's exit code (DESIGN §11).
 */
export function buildProgram(): Command {
  const context: ActionContext = { cwd: process.cwd(), output: processOutput(), interruptible: () => interruptible().signal };
  const program = new Command("factory")
    .description("A task-packet factory for coding agents: it runs the gates itself and never believes an agent.")
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  const groups = new Map<string, Command>();
  for (const spec of COMMANDS) {
    const words = spec.name.split(" ");
    const name = words.pop() as string;
    const parent = words.length === 0 ? program : groupOf(program, groups, words.join(" "));
    declare(parent.command(name), spec, context);
  }
  return program;
}

function groupOf(program: Command, groups: Map<string, Command>, name: string): Command {
  let group = groups.get(name);
  if (!group) {
    group = program.command(name).description(GROUPS[name] ?? "");
    groups.set(name, group);
  }
  return group;
}

/** One command of the table on commander: help, arguments, options and the action (its exit code kept for main). */
function declare(command: Command, spec: CommandSpec, context: ActionContext): void {
  if (spec.after) command.addHelpText("after", spec.after);
  command.description(spec.description);
  for (const [name, help] of spec.arguments ?? []) command.argument(name, help);
  for (const option of spec.options ?? []) {
    const declared = new Option(option.flags, option.help);
    if (option.parse) declared.argParser(option.parse);
    if (option.default !== undefined) declared.default(option.default);
    if (option.required) declared.makeOptionMandatory();
    command.addOption(declared);
  }
  command.action(async (...params: unknown[]) => {
    // commander passes the arguments, then the options, then the command itself.
    const opts = params[params.length - 2] as Record<string, unknown>;
    process.exitCode = await spec.run(context, opts, ...params.slice(0, -2));
  });
}

/**
 * The first Ctrl-C (or SIGTERM, or SIGHUP when the terminal goes away)
 * aborts: running agents and gates are killed (their whole process groups),
 * the attempt is recorded as interrupted, the lock released, and the command
 * exits 130. A second signal exits at once.
 */
function interruptible(): AbortController {
  const controller = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (controller.signal.aborted) process.exit(EXIT.interrupted);
      process.stderr.write(`\ninterrupting (${signal}): stopping agents and gates, recording the attempt as interrupted (again to quit at once)\n`);
      controller.abort();
    });
  }
  return controller;
}

/** What is short on the disks a command writes (the worktrees' cache, the checkout), said as `no space left: …`. */
function lowSpaceNote(): string | undefined {
  const low = lowSpace([factoryHome(), process.cwd()]);
  return low ? `no space left: ${low}` : undefined;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; anything else commander rejects is a usage error.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.invalid;
      return;
    }
    // A disk full says so in many words (git's "unable to write file"): the free space is asked too.
    const fault = resourceFault(error) ?? lowSpaceNote();
    if (fault) {
      // The machine's, not a bug: a disk full, a quota, open files, memory.
      process.stderr.write(`factory: stopped: ${fault} (${resourceLine(error)}). Nothing was merged by this command; free it, then run the command again.\n`);
      process.exitCode = EXIT.halted;
      return;
    }
    // The shared ledger's database away (past a worker's patience, or at once for a person's command): the environment's, not a bug.
    if (error instanceof Error && error.name === "LedgerUnreachable") {
      process.stderr.write(
        `factory: stopped: ${error.message}. What this command had not recorded yet was not recorded; once the database is back (\`factory doctor\` checks it), run the command again.\n`,
      );
      process.exitCode = EXIT.halted;
      return;
    }
    process.stderr.write(`factory: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.stderr.write("This is a bug in factory; nothing was merged by this command. Please report it with the output above.\n");
    process.exitCode = EXIT.halted;
  }
}

process.on("SIGINT", () => {
  process.exitCode = EXIT.interrupted;
  process.exit(EXIT.interrupted);
});

// `factory status | head`: a reader that stops reading ends the program quietly, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
    throw error;
  });
}

await main(process.argv);
