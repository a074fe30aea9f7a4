import { resolve } from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { EXIT, type ExitCode } from "./commands/exit-codes.js";
import { processOutput } from "./log/output.js";
import { factoryHome } from "./loop/context.js";
import { lowSpace, resourceFault } from "./util/resources.js";

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
    .addHelpText("after", "\nExamples:\n  factory init\n  factory init --ci github --workers 3")
    .description("write .factory/config.toml (detected surfaces) and make git ignore the state dirs")
    .option("--ci <forge>", "also write a scheduled workflow that runs the workers there (github)")
    .option("--workers <n>", "with --ci: how many workers a night runs (default 3)")
    .action(async (opts: { ci?: string; workers?: string }) => finish(await (await import("./commands/init.js")).init({ cwd, output, ci: opts.ci, workers: opts.workers })));

  program
    .command("lint")
    .addHelpText("after", "\nExample:\n  factory lint")
    .description("validate the config and packets; every problem at once; writes nothing")
    .argument("[ids...]", "packet ids to check (default: all)")
    .option("--json", "print a JSON report")
    .action(async (ids: string[], opts: { json?: boolean }) => finish(await (await import("./commands/lint.js")).lint({ cwd, ids, json: Boolean(opts.json), output })));

  program
    .command("cut")
    .addHelpText("after", '\nExamples:\n  factory cut --spec docs/SPEC.md --scope "section 3: the CSV loader"\n  factory cut --spec docs/SPEC.md --scope-file scope.txt --tier standard')
    .description(
      "a planner agent proposes packets with planted tests from a spec; the factory judges each (lint, planted tests fail at the tip, no repeats) and writes the accepted ones into your checkout, untracked",
    )
    .requiredOption("--spec <path>", "the spec, committed (packets are pinned to its last commit)")
    .option("--scope <text>", "which part of the spec to cut")
    .option("--scope-file <file>", "the scope, from a file")
    .option("--tier <name>", 'the tier whose agent plans (default: [planning] tier, else "advanced", else the strongest)')
    .option("--agent <name>", "plan with this agent of the config (with the model of a tier that uses it, or --model)")
    .option("--model <id>", "the model to plan with (one the agent's CLI serves)")
    .action(async (opts: { spec: string; scope?: string; scopeFile?: string; tier?: string; agent?: string; model?: string }) => {
      const controller = interruptible();
      finish(
        await (await import("./commands/cut.js")).cut({
          cwd,
          spec: opts.spec,
          scope: opts.scope,
          scopeFile: opts.scopeFile,
          tier: opts.tier,
          agent: opts.agent,
          model: opts.model,
          output,
          signal: controller.signal,
        }),
      );
    });

  program
    .command("assess")
    .addHelpText("after", "\nExamples:\n  factory assess P01 P02\n  factory assess --all --tier standard")
    .description("before money is spent: an assessor agent rules each packet ready, recut or reject, with evidence the factory checks; recorded per packet version")
    .argument("[ids...]", "packet ids to assess")
    .option("--all", "every packet not yet merged")
    .option("--tier <name>", 'the tier whose agent assesses (default: [planning] tier, else "advanced", else the strongest)')
    .action(async (ids: string[], opts: { all?: boolean; tier?: string }) => {
      const controller = interruptible();
      finish(await (await import("./commands/assess.js")).assess({ cwd, ids, all: Boolean(opts.all), tier: opts.tier, output, signal: controller.signal }));
    });

  program
    .command("plan")
    .addHelpText("after", "\nExample:\n  factory plan")
    .description("print the order the queue would run in; nothing is executed")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const early = await earlyReads(cwd);
      finish(await (await import("./commands/plan.js")).plan({ cwd, json: Boolean(opts.json), output, early }));
    });

  program
    .command("status")
    .addHelpText("after", "\nExamples:\n  factory status\n  factory status P01\n  factory status --json")
    .description("the board: state, attempts, cost and reason of every packet; with an id, its history")
    .argument("[id]", "a packet id")
    .option("--json", "print JSON (a stable shape, see docs/reference/json.md)")
    .action(async (id: string | undefined, opts: { json?: boolean }) => {
      const early = await earlyReads(cwd);
      finish(await (await import("./commands/status.js")).status({ cwd, id, json: Boolean(opts.json), output, early }));
    });

  program
    .command("run")
    .description("drain the queue: implement, gate, review, merge — never believing an agent")
    .option("--once", "run a single attempt, then stop")
    .option("--packet <id>", "run only this packet")
    .option("--max-cost <usd>", "stop claiming once this run has spent this much", (value: string) => parseNumber(value, { min: 0 }))
    .option("--concurrency <n>", "packets in flight at once", (value: string) => parseNumber(value, { min: 1, max: 32, integer: true }))
    .option("--keep-going", 'a blocked packet holds only its dependents; the rest of the queue runs ([limits] on_block = "continue")')
    .option("--json", "stream the run's events on stdout, one JSON object per line (everything else goes to stderr)")
    .option("--worker <name>", "this worker's name on a PostgreSQL ledger (default: the host name and a short id)")
    .addHelpText(
      "after",
      "\nExamples:\n  factory run\n  factory run --keep-going --max-cost 25\n  factory run --json | jq -c 'select(.kind == \"outcome\")'\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory run --worker build-1",
    )
    .action(async (opts: { once?: boolean; packet?: string; maxCost?: number; concurrency?: number; keepGoing?: boolean; json?: boolean; worker?: string }) => {
      const controller = interruptible();
      finish(
        await (await import("./commands/run.js")).run({
          cwd,
          once: Boolean(opts.once),
          packet: opts.packet,
          maxCost: opts.maxCost,
          concurrency: opts.concurrency,
          keepGoing: Boolean(opts.keepGoing),
          json: Boolean(opts.json),
          ...(opts.worker ? { worker: opts.worker } : {}),
          output,
          signal: controller.signal,
        }),
      );
    });

  program
    .command("approve")
    .addHelpText("after", "\nExample:\n  factory approve P01")
    .description("the human gate: review a held packet, type its id, and merge exactly the approved tree")
    .argument("<id>", "a packet awaiting_human")
    .option("--yes", "approve without typing the id (for a person scripting it)")
    .action(async (id: string, opts: { yes?: boolean }) => {
      const controller = interruptible();
      finish(
        await (await import("./commands/approve.js")).approve({
          cwd,
          id,
          yes: Boolean(opts.yes),
          output,
          signal: controller.signal,
          input: process.stdin,
          env: process.env,
        }),
      );
    });

  program
    .command("reject")
    .addHelpText("after", '\nExample:\n  factory reject P01 --reason "name it twice(), as the spec says"')
    .description("send a held packet back, with the reason as feedback for the next attempt")
    .argument("<id>", "a packet awaiting_human")
    .requiredOption("--reason <text>", "why: the next attempt is told")
    .option("--yes", "without typing the id (for a person scripting it)")
    .action(async (id: string, opts: { reason: string; yes?: boolean }) =>
      finish(await (await import("./commands/reject.js")).reject({ cwd, id, reason: opts.reason, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("intake")
    .addHelpText("after", "\nExamples:\n  factory intake 12\n  factory intake https://github.com/acme/widgets/issues/12")
    .description("write an issue of the [forge] repository (its text, author, labels and comments) as a spec slice under docs/intake/, untracked, to commit and cut packets from")
    .argument("<issue>", "the issue's number or URL")
    .action(async (issue: string) => finish(await (await import("./commands/intake.js")).intake({ cwd, issue, output, env: process.env })));

  program
    .command("mcp")
    .addHelpText("after", "\nAdd it to a coding agent's MCP servers (docs/guides/people-and-tools.md), e.g.:\n  claude mcp add factory -- factory mcp")
    .description("serve the Model Context Protocol over stdio for this repository: status, show, plan, lint, diff, report, draft_packet, cut (never approve, reject, answer, unblock, reset or run)")
    .action(async () => {
      await (await import("./mcp/server.js")).serveMcp(cwd, VERSION);
      finish(EXIT.ok);
    });

  program
    .command("answer")
    .addHelpText("after", '\nExamples:\n  factory answer P01 "seconds, as the spec\'s table says"\n  factory answer P01 --file answer.md')
    .description("answer the question a packet's implementer asked; the next attempt is told (no attempt is spent on a question)")
    .argument("<id>", "a packet awaiting_answer")
    .argument("[text]", "the answer")
    .option("--file <path>", "read the answer from a file")
    .option("--yes", "without typing the id (for a person scripting it)")
    .action(async (id: string, text: string | undefined, opts: { file?: string; yes?: boolean }) =>
      finish(await (await import("./commands/answer.js")).answer({ cwd, id, text, file: opts.file, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("reset")
    .addHelpText("after", "\nExample:\n  factory reset P01")
    .description("start a packet over (attempts back to zero, worktree removed); history is kept")
    .argument("<id>")
    .option("--yes", "without typing the id (for a person scripting it)")
    .action(async (id: string, opts: { yes?: boolean }) =>
      finish(await (await import("./commands/reset.js")).reset({ cwd, id, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("unblock")
    .addHelpText("after", "\nExample:\n  factory unblock P01 --attempts 2")
    .description("give a blocked packet more attempts, keeping its history")
    .argument("<id>")
    .option("--attempts <n>", "how many more attempts", (value: string) => parseNumber(value, { min: 1, max: 10, integer: true }), 1)
    .option("--yes", "without typing the id (for a person scripting it)")
    .action(async (id: string, opts: { attempts: number; yes?: boolean }) =>
      finish(await (await import("./commands/unblock.js")).unblock({ cwd, id, attempts: opts.attempts, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("pause")
    .addHelpText("after", "\nExamples:\n  factory pause\n  factory pause --interrupt")
    .description("stop every worker of this ledger from claiming packets (a person's command); --interrupt also stops running attempts, unspent")
    .option("--interrupt", "also stop the attempts running now (recorded interrupted: no attempt spent)")
    .option("--yes", "without typing pause (for a person scripting it)")
    .action(async (opts: { interrupt?: boolean; yes?: boolean }) =>
      finish(await (await import("./commands/pause.js")).pause({ cwd, output, env: process.env, interrupt: Boolean(opts.interrupt), yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("resume")
    .addHelpText("after", "\nExample:\n  factory resume")
    .description("lift factory pause: workers started after it claim again")
    .option("--yes", "without typing resume (for a person scripting it)")
    .action(async (opts: { yes?: boolean }) => finish(await (await import("./commands/pause.js")).resume({ cwd, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })));

  program
    .command("acknowledge")
    .addHelpText("after", "\nExample:\n  factory acknowledge P01")
    .description("accept that a merged packet's landing is gone from the target on purpose (reverted, or the history rewritten): no longer warned about")
    .argument("<id>")
    .option("--yes", "without typing the id (for a person scripting it)")
    .action(async (id: string, opts: { yes?: boolean }) =>
      finish(await (await import("./commands/acknowledge.js")).acknowledge({ cwd, id, output, env: process.env, yes: Boolean(opts.yes), input: process.stdin })),
    );

  program
    .command("gc")
    .addHelpText("after", "\nExample:\n  factory gc --dry-run")
    .description("remove what the factory no longer needs: merged packets' branches and worktrees, old run directories, logs and cached baselines")
    .option("--dry-run", "list what would be removed, remove nothing")
    .action(async (opts: { dryRun?: boolean }) => finish(await (await import("./commands/gc.js")).gc({ cwd, dryRun: Boolean(opts.dryRun), output, env: process.env })));

  const ledger = program.command("ledger").description("check the ledger's hash chain, or start a new ledger from what git proves when it breaks");
  ledger
    .command("verify")
    .addHelpText("after", "\nExamples:\n  factory ledger verify\n  factory ledger verify --json")
    .description("read the whole ledger: whether its hash chain holds; when it breaks, the first bad line and what rests on the lines after it (exit 1)")
    .option("--json", "print JSON: holds, entries, and where it breaks with what rests on it")
    .action(async (opts: { json?: boolean }) => finish(await (await import("./commands/ledger.js")).ledgerVerify({ cwd, output, json: Boolean(opts.json) })));
  ledger
    .command("repair")
    .addHelpText("after", "\nExample:\n  factory ledger repair --yes")
    .description(
      "a person's command, for a broken chain: start a new ledger from what git proves (merged from trailers, held from refs/factory/held/), keep the old one beside it, and say what is lost",
    )
    .option("--yes", "without typing `repair` (for a person scripting it)")
    .action(async (opts: { yes?: boolean }) =>
      finish(await (await import("./commands/ledger.js")).ledgerRepair({ cwd, output, env: process.env, person: { yes: Boolean(opts.yes), input: process.stdin } })),
    );

  ledger
    .command("migrate")
    .addHelpText("after", "\nExample:\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory ledger migrate")
    .description("create or bring up to date the PostgreSQL ledger's schema ([ledger] url or FACTORY_LEDGER_URL); `run` does it too when the schema is older")
    .action(async () => finish(await (await import("./commands/ledger-move.js")).ledgerMigrate({ cwd, output })));
  ledger
    .command("export")
    .addHelpText("after", "\nExample:\n  factory ledger export night.jsonl")
    .description("write the ledger's chained events, exactly as stored, to a JSONL file (or - for stdout), its chain verified first")
    .argument("<file>", "where to write (refused if it exists)")
    .action(async (file: string) => finish(await (await import("./commands/ledger-move.js")).ledgerExport({ cwd, output, file })));
  ledger
    .command("import")
    .addHelpText("after", "\nExample:\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory ledger import night.jsonl")
    .description("a person's command: copy an exported ledger into this repository's ledger, which must be empty; the chain is verified on both sides")
    .argument("<file>", "a file `factory ledger export` wrote")
    .action(async (file: string) => finish(await (await import("./commands/ledger-move.js")).ledgerImport({ cwd, output, file, env: process.env })));

  const devPostgres = program.command("dev-postgres").description("a local PostgreSQL to try several workers with (Debian's postgresql package; not for production)");
  devPostgres
    .command("start")
    .addHelpText("after", "\nExample:\n  factory dev-postgres start  # then the export line it prints")
    .description("start it on 127.0.0.1 and write its URL to a file only you can read")
    .option("--dir <dir>", "where its data goes (default: a directory of yours under the temporary directory)")
    .option("--port <n>", "its port (default: a free one)", (value: string) => parseNumber(value, { min: 1, max: 65535, integer: true }))
    .action(async (opts: { dir?: string; port?: number }) =>
      finish(await (await import("./commands/dev-postgres.js")).devPostgresStart({ output, ...(opts.dir ? { dir: resolve(cwd, opts.dir) } : {}), ...(opts.port ? { port: opts.port } : {}) })),
    );
  devPostgres
    .command("stop")
    .addHelpText("after", "\nExample:\n  factory dev-postgres stop")
    .description("stop it and remove its data")
    .option("--dir <dir>", "where its data is (default: the one `start` used)")
    .action(async (opts: { dir?: string }) => finish(await (await import("./commands/dev-postgres.js")).devPostgresStop({ output, ...(opts.dir ? { dir: resolve(cwd, opts.dir) } : {}) })));

  program
    .command("board")
    .addHelpText("after", "\nExamples:\n  factory board\n  factory board --port 8377 --open")
    .description("a read-only web page of the queue on 127.0.0.1, live while a run goes on, with a page per packet")
    .option("--port <n>", "the port (default: a free one, printed)", (value: string) => parseNumber(value, { min: 0, max: 65535, integer: true }), 0)
    .option("--open", "open it in a browser (xdg-open)")
    .action(async (opts: { port: number; open?: boolean }) => {
      // Ctrl-C is how a board ends: it closes its pages' streams and exits 0 (a second signal exits at once).
      const controller = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.removeAllListeners(signal);
        process.on(signal, () => (controller.signal.aborted ? process.exit(EXIT.interrupted) : controller.abort()));
      }
      finish(await (await import("./commands/board.js")).board({ cwd, port: opts.port, open: Boolean(opts.open), output, signal: controller.signal }));
    });

  program
    .command("diff")
    .addHelpText("after", "\nExample:\n  factory diff P01 | less")
    .description("the change of a held packet, or of its last gated attempt")
    .argument("<id>")
    .option("--json", "print JSON: the packet, the attempt, where the diff comes from (held or gated) and the diff")
    .action(async (id: string, opts: { json?: boolean }) => finish(await (await import("./commands/diff.js")).diff({ cwd, id, output, json: Boolean(opts.json) })));

  program
    .command("report")
    .description("the morning brief: what merged, what waits for you (with the agent's claims and the review's evidence), what blocked and why, what was not attempted, and the spend")
    .option("--since <date>", "everything since this date or time, instead of the last run")
    .option("--html <file>", "also write the brief as a self-contained HTML page (a new file)")
    .option("--json", "print the brief as JSON (the same content as the text)")
    .option("--agents", "instead: per agent and model, attempts, merged first time, 'done' said while a gate failed, tamper and scope refusals, questions, cost per merged packet")
    .addHelpText("after", "\nExamples:\n  factory report\n  factory report --since 2026-11-30 --html brief.html\n  factory report --json\n  factory report --agents")
    .action(async (opts: { since?: string; html?: string; json?: boolean; agents?: boolean }) =>
      finish(
        await (await import("./commands/report.js")).report({
          cwd,
          output,
          json: Boolean(opts.json),
          agents: Boolean(opts.agents),
          ...(opts.since !== undefined ? { since: opts.since } : {}),
          ...(opts.html !== undefined ? { html: opts.html } : {}),
        }),
      ),
    );

  program
    .command("show")
    .description("one packet for a person: attempts, agent calls and costs, gates with their output, review rulings, decisions")
    .argument("<id>")
    .option("--json", "print JSON: the packet's state, attempts, cost, reason, next command and every ledger event")
    .addHelpText("after", "\nExample:\n  factory show P01")
    .action(async (id: string, opts: { json?: boolean }) => finish(await (await import("./commands/show.js")).show({ cwd, id, output, json: Boolean(opts.json) })));

  program
    .command("doctor")
    .addHelpText("after", "\nExamples:\n  factory doctor\n  factory doctor --no-models --no-guards\n  factory doctor --reviewer")
    .description("every check `run` makes before it claims anything, then proof that each guard and tests gate fires on a synthetic violation in a scratch worktree")
    .option("--no-models", "do not ask each tier's model its one tiny question")
    .option("--no-guards", "do not prove the guards (the proof runs each tests gate's suite five times, once outside the sandbox)")
    .option("--reviewer", "also run the reviewer canary: each reviewer tier reviews a queued packet with nothing implemented, and must rule nothing held (one paid review call per tier)")
    .option("--json", "print the checks and proofs as JSON on stdout (schema, checks, proofs, exit); the lines to read go to stderr")
    .action(async (opts: { models: boolean; guards: boolean; reviewer?: boolean; json?: boolean }) => {
      const controller = interruptible();
      finish(
        await (await import("./commands/doctor.js")).doctor({
          cwd,
          models: opts.models,
          guards: opts.guards,
          reviewer: Boolean(opts.reviewer),
          output,
          signal: controller.signal,
          json: Boolean(opts.json),
        }),
      );
    });

  program
    .command("demo")
    .addHelpText("after", "\nExamples:\n  factory demo\n  factory demo --dir /tmp/factory-demo")
    .description("set up the bundled sample repository and run the factory on it (no API key)")
    .addOption(new Option("--dir <path>", "where to create the sample repository (default: a new temp dir)"))
    .action(async (opts: { dir?: string }) => {
      const controller = interruptible();
      finish(await (await import("./commands/demo.js")).demo({ dir: opts.dir, output, signal: controller.signal }));
    });

  return program;
}

const VERSION = "0.1.0";

/** The first git reads of `status` and `plan`, started before their modules load (see commands/early.ts). */
async function earlyReads(cwd: string): Promise<import("./commands/early.js").EarlyReads> {
  return (await import("./commands/early.js")).startEarlyReads(cwd);
}

/** A number from the command line, checked like the config's numbers: a usage error (exit 2) otherwise. */
function parseNumber(value: string, bounds: { min?: number; max?: number; integer?: boolean } = {}): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) throw new InvalidArgumentError(`"${value}" is not a number`);
  if (bounds.integer && !Number.isInteger(number)) throw new InvalidArgumentError(`"${value}" is not a whole number`);
  if (bounds.min !== undefined && number < bounds.min) throw new InvalidArgumentError(`must be at least ${bounds.min}, not ${value}`);
  if (bounds.max !== undefined && number > bounds.max) throw new InvalidArgumentError(`must be at most ${bounds.max}, not ${value}`);
  return number;
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
      process.stderr.write(
        `factory: stopped: ${fault} (${error instanceof Error ? error.message.split("\n")[0] : String(error)}). Nothing was merged by this command; free it, then run the command again.\n`,
      );
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
