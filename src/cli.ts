import { Command, CommanderError, Option } from "commander";
import { EXIT, type ExitCode } from "./commands/exit-codes.js";
import { processOutput } from "./log/output.js";

/**
 * The commander program. Each action calls one command function; this file
 * alone turns their results into the process's exit code (DESIGN §11).
 */
export function buildProgram(): Command {
  const output = processOutput();
  const cwd = process.cwd();
  const program = new Command("factory")
    .description("A task-packet factory for coding agents: it runs the gates itself and never believes an agent.")
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();

  const finish = (code: ExitCode): void => {
    process.exitCode = code;
  };

  program
    .command("init")
    .description("write .factory/config.toml (detected surfaces) and make git ignore the state dirs")
    .action(async () => finish(await (await import("./commands/init.js")).init({ cwd, output })));

  program
    .command("lint")
    .description("validate the config and packets; every problem at once; writes nothing")
    .argument("[ids...]", "packet ids to check (default: all)")
    .option("--json", "print a JSON report")
    .action(async (ids: string[], opts: { json?: boolean }) =>
      finish(await (await import("./commands/lint.js")).lint({ cwd, ids, json: Boolean(opts.json), output })));

  program
    .command("plan")
    .description("print the order the queue would run in; nothing is executed")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) =>
      finish(await (await import("./commands/plan.js")).plan({ cwd, json: Boolean(opts.json), output })));

  program
    .command("status")
    .description("the board: state, attempts, cost and reason of every packet; with an id, its history")
    .argument("[id]", "a packet id")
    .option("--json", "print JSON (a stable shape, see the README)")
    .action(async (id: string | undefined, opts: { json?: boolean }) =>
      finish(await (await import("./commands/status.js")).status({ cwd, id, json: Boolean(opts.json), output })));

  program
    .command("demo")
    .description("set up the bundled sample repository and run the factory on it (no API key)")
    .addOption(new Option("--dir <path>", "where to create the sample repository (default: a new temp dir)"))
    .action(async (opts: { dir?: string }) =>
      finish(await (await import("./commands/demo.js")).demo({ dir: opts.dir, output })));

  return program;
}

const VERSION = "0.1.0";

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
    process.stderr.write(`factory: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.stderr.write("This is a bug in factory; nothing was merged by this command. Please report it with the output above.\n");
    process.exitCode = EXIT.halted;
  }
}

process.on("SIGINT", () => {
  process.exitCode = EXIT.interrupted;
  process.exit(EXIT.interrupted);
});

await main(process.argv);
