import { resolve } from "node:path";
import { InvalidArgumentError } from "commander";
import { EXIT, type ExitCode } from "./commands/exit-codes.js";
import type { Output } from "./log/output.js";

/** What every command's action has: where it runs, where it writes, and how a long one hears Ctrl-C. */
export interface ActionContext {
  cwd: string;
  output: Output;
  /** The first Ctrl-C (SIGTERM, SIGHUP) aborts this signal; a second exits at once. */
  interruptible(): AbortSignal;
}

/** One option of a command, as commander declares it. */
export interface OptionSpec {
  flags: string;
  help: string;
  parse?: (value: string) => unknown;
  default?: unknown;
  required?: boolean;
}

/**
 * One command of the CLI: its name (`ledger verify` under its group), its help, arguments and options, and
 * the action, which loads its module only when it runs (a command's start-up reads nothing it does not use).
 */
export interface CommandSpec<O = Record<string, unknown>, A extends unknown[] = unknown[]> {
  name: string;
  description: string;
  /** Shown after the options: examples. */
  after?: string;
  arguments?: readonly (readonly [name: string, help?: string])[];
  options?: readonly OptionSpec[];
  run(context: ActionContext, opts: O, ...args: A): Promise<ExitCode>;
}

/** A command of the table with its own option and argument types. */
function command<O, A extends unknown[] = []>(spec: CommandSpec<O, A>): CommandSpec {
  return spec as unknown as CommandSpec;
}

/** The groups of subcommands, with their descriptions. */
export const GROUPS: Readonly<Record<string, string>> = {
  ledger: "check the ledger's hash chain, or start a new ledger from what git proves when it breaks",
  "dev-postgres": "a local PostgreSQL to try several workers with (Debian's postgresql package; not for production)",
};

export const VERSION = "0.1.0";

const yes = (what = "the id"): OptionSpec => ({ flags: "--yes", help: `without typing ${what} (for a person scripting it)` });
const json = (help: string): OptionSpec => ({ flags: "--json", help });
/** A person's command reads its confirmation from the terminal (stdin is opened only when such a command runs). */
const person = (): { env: NodeJS.ProcessEnv; input: NodeJS.ReadStream } => ({ env: process.env, input: process.stdin });

/** Every command, in the order `factory --help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  command<{ ci?: string; workers?: string }>({
    name: "init",
    after: "\nExamples:\n  factory init\n  factory init --ci github --workers 3",
    description: "write .factory/config.toml (detected surfaces) and make git ignore the state dirs",
    options: [
      { flags: "--ci <forge>", help: "also write a scheduled workflow that runs the workers there (github)" },
      { flags: "--workers <n>", help: "with --ci: how many workers a night runs (default 3)" },
    ],
    run: async ({ cwd, output }, opts) => (await import("./commands/init.js")).init({ cwd, output, ci: opts.ci, workers: opts.workers }),
  }),
  command<{ json?: boolean }, [string[]]>({
    name: "lint",
    after: "\nExample:\n  factory lint",
    description: "validate the config and packets; every problem at once; writes nothing",
    arguments: [["[ids...]", "packet ids to check (default: all)"]],
    options: [json("print a JSON report")],
    run: async ({ cwd, output }, opts, ids) => (await import("./commands/lint.js")).lint({ cwd, ids, json: Boolean(opts.json), output }),
  }),
  command<{ spec: string; scope?: string; scopeFile?: string; tier?: string; agent?: string; model?: string }>({
    name: "cut",
    after: '\nExamples:\n  factory cut --spec docs/SPEC.md --scope "section 3: the CSV loader"\n  factory cut --spec docs/SPEC.md --scope-file scope.txt --tier standard',
    description:
      "a planner agent proposes packets with planted tests from a spec; the factory judges each (lint, planted tests fail at the tip, no repeats) and writes the accepted ones into your checkout, untracked",
    options: [
      { flags: "--spec <path>", help: "the spec, committed (packets are pinned to its last commit)", required: true },
      { flags: "--scope <text>", help: "which part of the spec to cut" },
      { flags: "--scope-file <file>", help: "the scope, from a file" },
      { flags: "--tier <name>", help: 'the tier whose agent plans (default: [planning] tier, else "advanced", else the strongest)' },
      { flags: "--agent <name>", help: "plan with this agent of the config (with the model of a tier that uses it, or --model)" },
      { flags: "--model <id>", help: "the model to plan with (one the agent's CLI serves)" },
    ],
    run: async ({ cwd, output, interruptible }, opts) => {
      const signal = interruptible();
      const { spec, scope, scopeFile, tier, agent, model } = opts;
      return (await import("./commands/cut.js")).cut({ cwd, spec, scope, scopeFile, tier, agent, model, output, signal });
    },
  }),
  command<{ all?: boolean; tier?: string }, [string[]]>({
    name: "assess",
    after: "\nExamples:\n  factory assess P01 P02\n  factory assess --all --tier standard",
    description: "before money is spent: an assessor agent rules each packet ready, recut or reject, with evidence the factory checks; recorded per packet version",
    arguments: [["[ids...]", "packet ids to assess"]],
    options: [
      { flags: "--all", help: "every packet not yet merged" },
      { flags: "--tier <name>", help: 'the tier whose agent assesses (default: [planning] tier, else "advanced", else the strongest)' },
    ],
    run: async ({ cwd, output, interruptible }, opts, ids) => {
      const signal = interruptible();
      return (await import("./commands/assess.js")).assess({ cwd, ids, all: Boolean(opts.all), tier: opts.tier, output, signal });
    },
  }),
  command<{ json?: boolean }>({
    name: "plan",
    after: "\nExample:\n  factory plan",
    description: "print the order the queue would run in; nothing is executed",
    options: [json("print JSON")],
    run: async ({ cwd, output }, opts) => {
      const early = await earlyReads(cwd);
      return (await import("./commands/plan.js")).plan({ cwd, json: Boolean(opts.json), output, early });
    },
  }),
  command<{ json?: boolean }, [string | undefined]>({
    name: "status",
    after: "\nExamples:\n  factory status\n  factory status P01\n  factory status --json",
    description: "the board: state, attempts, cost and reason of every packet; with an id, its history",
    arguments: [["[id]", "a packet id"]],
    options: [json("print JSON (a stable shape, see docs/reference/json.md)")],
    run: async ({ cwd, output }, opts, id) => {
      const early = await earlyReads(cwd);
      return (await import("./commands/status.js")).status({ cwd, id, json: Boolean(opts.json), output, early });
    },
  }),
  command<{ once?: boolean; packet?: string; maxCost?: number; concurrency?: number; keepGoing?: boolean; json?: boolean; worker?: string }>({
    name: "run",
    description: "drain the queue: implement, gate, review, merge — never believing an agent",
    options: [
      { flags: "--once", help: "run a single attempt, then stop" },
      { flags: "--packet <id>", help: "run only this packet" },
      { flags: "--max-cost <usd>", help: "stop claiming once this run has spent this much", parse: (value) => parseNumber(value, { min: 0 }) },
      { flags: "--concurrency <n>", help: "packets in flight at once", parse: (value) => parseNumber(value, { min: 1, max: 32, integer: true }) },
      { flags: "--keep-going", help: 'a blocked packet holds only its dependents; the rest of the queue runs ([limits] on_block = "continue")' },
      json("stream the run's events on stdout, one JSON object per line (everything else goes to stderr)"),
      { flags: "--worker <name>", help: "this worker's name on a PostgreSQL ledger (default: the host name and a short id)" },
    ],
    after:
      "\nExamples:\n  factory run\n  factory run --keep-going --max-cost 25\n  factory run --json | jq -c 'select(.kind == \"outcome\")'\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory run --worker build-1",
    run: async ({ cwd, output, interruptible }, opts) => {
      const signal = interruptible();
      return (await import("./commands/run.js")).run({
        cwd,
        once: Boolean(opts.once),
        packet: opts.packet,
        maxCost: opts.maxCost,
        concurrency: opts.concurrency,
        keepGoing: Boolean(opts.keepGoing),
        json: Boolean(opts.json),
        ...(opts.worker ? { worker: opts.worker } : {}),
        output,
        signal,
      });
    },
  }),
  command<{ yes?: boolean }, [string]>({
    name: "approve",
    after: "\nExample:\n  factory approve P01",
    description: "the human gate: review a held packet, type its id, and merge exactly the approved tree",
    arguments: [["<id>", "a packet awaiting_human"]],
    options: [{ flags: "--yes", help: "approve without typing the id (for a person scripting it)" }],
    run: async ({ cwd, output, interruptible }, opts, id) => {
      const signal = interruptible();
      return (await import("./commands/approve.js")).approve({ cwd, id, yes: Boolean(opts.yes), output, signal, ...person() });
    },
  }),
  command<{ reason: string; yes?: boolean }, [string]>({
    name: "reject",
    after: '\nExample:\n  factory reject P01 --reason "name it twice(), as the spec says"',
    description: "send a held packet back, with the reason as feedback for the next attempt",
    arguments: [["<id>", "a packet awaiting_human"]],
    options: [{ flags: "--reason <text>", help: "why: the next attempt is told", required: true }, yes()],
    run: async ({ cwd, output }, opts, id) => (await import("./commands/reject.js")).reject({ cwd, id, reason: opts.reason, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<Record<string, never>, [string]>({
    name: "intake",
    after: "\nExamples:\n  factory intake 12\n  factory intake https://github.com/acme/widgets/issues/12",
    description: "write an issue of the [forge] repository (its text, author, labels and comments) as a spec slice under docs/intake/, untracked, to commit and cut packets from",
    arguments: [["<issue>", "the issue's number or URL"]],
    run: async ({ cwd, output }, _opts, issue) => (await import("./commands/intake.js")).intake({ cwd, issue, output, env: process.env }),
  }),
  command({
    name: "mcp",
    after: "\nAdd it to a coding agent's MCP servers (docs/guides/people-and-tools.md), e.g.:\n  claude mcp add factory -- factory mcp",
    description: "serve the Model Context Protocol over stdio for this repository: status, show, plan, lint, diff, report, draft_packet, cut (never approve, reject, answer, unblock, reset or run)",
    run: async ({ cwd }) => {
      await (await import("./mcp/server.js")).serveMcp(cwd, VERSION);
      return EXIT.ok;
    },
  }),
  command<{ file?: string; yes?: boolean }, [string, string | undefined]>({
    name: "answer",
    after: '\nExamples:\n  factory answer P01 "seconds, as the spec\'s table says"\n  factory answer P01 --file answer.md',
    description: "answer the question a packet's implementer asked; the next attempt is told (no attempt is spent on a question)",
    arguments: [
      ["<id>", "a packet awaiting_answer"],
      ["[text]", "the answer"],
    ],
    options: [{ flags: "--file <path>", help: "read the answer from a file" }, yes()],
    run: async ({ cwd, output }, opts, id, text) => (await import("./commands/answer.js")).answer({ cwd, id, text, file: opts.file, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ yes?: boolean }, [string]>({
    name: "reset",
    after: "\nExample:\n  factory reset P01",
    description: "start a packet over (attempts back to zero, worktree removed); history is kept",
    arguments: [["<id>"]],
    options: [yes()],
    run: async ({ cwd, output }, opts, id) => (await import("./commands/reset.js")).reset({ cwd, id, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ attempts: number; yes?: boolean }, [string]>({
    name: "unblock",
    after: "\nExample:\n  factory unblock P01 --attempts 2",
    description: "give a blocked packet more attempts, keeping its history",
    arguments: [["<id>"]],
    options: [{ flags: "--attempts <n>", help: "how many more attempts", parse: (value) => parseNumber(value, { min: 1, max: 10, integer: true }), default: 1 }, yes()],
    run: async ({ cwd, output }, opts, id) => (await import("./commands/unblock.js")).unblock({ cwd, id, attempts: opts.attempts, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ interrupt?: boolean; yes?: boolean }>({
    name: "pause",
    after: "\nExamples:\n  factory pause\n  factory pause --interrupt",
    description: "stop every worker of this ledger from claiming packets (a person's command); --interrupt also stops running attempts, unspent",
    options: [{ flags: "--interrupt", help: "also stop the attempts running now (recorded interrupted: no attempt spent)" }, yes("pause")],
    run: async ({ cwd, output }, opts) => (await import("./commands/pause.js")).pause({ cwd, output, interrupt: Boolean(opts.interrupt), yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ yes?: boolean }>({
    name: "resume",
    after: "\nExample:\n  factory resume",
    description: "lift factory pause: workers started after it claim again",
    options: [yes("resume")],
    run: async ({ cwd, output }, opts) => (await import("./commands/pause.js")).resume({ cwd, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ yes?: boolean }, [string]>({
    name: "acknowledge",
    after: "\nExample:\n  factory acknowledge P01",
    description: "accept that a merged packet's landing is gone from the target on purpose (reverted, or the history rewritten): no longer warned about",
    arguments: [["<id>"]],
    options: [yes()],
    run: async ({ cwd, output }, opts, id) => (await import("./commands/acknowledge.js")).acknowledge({ cwd, id, output, yes: Boolean(opts.yes), ...person() }),
  }),
  command<{ dryRun?: boolean }>({
    name: "gc",
    after: "\nExample:\n  factory gc --dry-run",
    description: "remove what the factory no longer needs: merged packets' branches and worktrees, old run directories, logs and cached baselines",
    options: [{ flags: "--dry-run", help: "list what would be removed, remove nothing" }],
    run: async ({ cwd, output }, opts) => (await import("./commands/gc.js")).gc({ cwd, dryRun: Boolean(opts.dryRun), output, env: process.env }),
  }),
  command<{ json?: boolean }>({
    name: "ledger verify",
    after: "\nExamples:\n  factory ledger verify\n  factory ledger verify --json",
    description: "read the whole ledger: whether its hash chain holds; when it breaks, the first bad line and what rests on the lines after it (exit 1)",
    options: [json("print JSON: holds, entries, and where it breaks with what rests on it")],
    run: async ({ cwd, output }, opts) => (await import("./commands/ledger.js")).ledgerVerify({ cwd, output, json: Boolean(opts.json) }),
  }),
  command<{ yes?: boolean }>({
    name: "ledger repair",
    after: "\nExample:\n  factory ledger repair --yes",
    description:
      "a person's command, for a broken chain: start a new ledger from what git proves (merged from trailers, held from refs/factory/held/), keep the old one beside it, and say what is lost",
    options: [yes("`repair`")],
    run: async ({ cwd, output }, opts) => (await import("./commands/ledger.js")).ledgerRepair({ cwd, output, env: process.env, person: { yes: Boolean(opts.yes), input: process.stdin } }),
  }),
  command({
    name: "ledger migrate",
    after: "\nExample:\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory ledger migrate",
    description: "create or bring up to date the PostgreSQL ledger's schema ([ledger] url or FACTORY_LEDGER_URL); `run` does it too when the schema is older",
    run: async ({ cwd, output }) => (await import("./commands/ledger-move.js")).ledgerMigrate({ cwd, output }),
  }),
  command<Record<string, never>, [string]>({
    name: "ledger export",
    after: "\nExample:\n  factory ledger export night.jsonl",
    description: "write the ledger's chained events, exactly as stored, to a JSONL file (or - for stdout), its chain verified first",
    arguments: [["<file>", "where to write (refused if it exists)"]],
    run: async ({ cwd, output }, _opts, file) => (await import("./commands/ledger-move.js")).ledgerExport({ cwd, output, file }),
  }),
  command<Record<string, never>, [string]>({
    name: "ledger import",
    after: "\nExample:\n  FACTORY_LEDGER_URL=postgres://factory@db/factory factory ledger import night.jsonl",
    description: "a person's command: copy an exported ledger into this repository's ledger, which must be empty; the chain is verified on both sides",
    arguments: [["<file>", "a file `factory ledger export` wrote"]],
    run: async ({ cwd, output }, _opts, file) => (await import("./commands/ledger-move.js")).ledgerImport({ cwd, output, file, env: process.env }),
  }),
  command<{ dir?: string; port?: number }>({
    name: "dev-postgres start",
    after: "\nExample:\n  factory dev-postgres start  # then the export line it prints",
    description: "start it on 127.0.0.1 and write its URL to a file only you can read",
    options: [
      { flags: "--dir <dir>", help: "where its data goes (default: a directory of yours under the temporary directory)" },
      { flags: "--port <n>", help: "its port (default: a free one)", parse: (value) => parseNumber(value, { min: 1, max: 65535, integer: true }) },
    ],
    run: async ({ cwd, output }, opts) =>
      (await import("./commands/dev-postgres.js")).devPostgresStart({ output, ...(opts.dir ? { dir: resolve(cwd, opts.dir) } : {}), ...(opts.port ? { port: opts.port } : {}) }),
  }),
  command<{ dir?: string }>({
    name: "dev-postgres stop",
    after: "\nExample:\n  factory dev-postgres stop",
    description: "stop it and remove its data",
    options: [{ flags: "--dir <dir>", help: "where its data is (default: the one `start` used)" }],
    run: async ({ cwd, output }, opts) => (await import("./commands/dev-postgres.js")).devPostgresStop({ output, ...(opts.dir ? { dir: resolve(cwd, opts.dir) } : {}) }),
  }),
  command<{ port: number; open?: boolean }>({
    name: "board",
    after: "\nExamples:\n  factory board\n  factory board --port 8377 --open",
    description: "a read-only web page of the queue on 127.0.0.1, live while a run goes on, with a page per packet",
    options: [
      { flags: "--port <n>", help: "the port (default: a free one, printed)", parse: (value) => parseNumber(value, { min: 0, max: 65535, integer: true }), default: 0 },
      { flags: "--open", help: "open it in a browser (xdg-open)" },
    ],
    run: async ({ cwd, output }, opts) => {
      // Ctrl-C is how a board ends: it closes its pages' streams and exits 0 (a second signal exits at once).
      const controller = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.removeAllListeners(signal);
        process.on(signal, () => (controller.signal.aborted ? process.exit(EXIT.interrupted) : controller.abort()));
      }
      return (await import("./commands/board.js")).board({ cwd, port: opts.port, open: Boolean(opts.open), output, signal: controller.signal });
    },
  }),
  command<{ json?: boolean }, [string]>({
    name: "diff",
    after: "\nExample:\n  factory diff P01 | less",
    description: "the change of a held packet, or of its last gated attempt",
    arguments: [["<id>"]],
    options: [json("print JSON: the packet, the attempt, where the diff comes from (held or gated) and the diff")],
    run: async ({ cwd, output }, opts, id) => (await import("./commands/diff.js")).diff({ cwd, id, output, json: Boolean(opts.json) }),
  }),
  command<{ since?: string; html?: string; json?: boolean; agents?: boolean }>({
    name: "report",
    description: "the morning brief: what merged, what waits for you (with the agent's claims and the review's evidence), what blocked and why, what was not attempted, and the spend",
    options: [
      { flags: "--since <date>", help: "everything since this date or time, instead of the last run" },
      { flags: "--html <file>", help: "also write the brief as a self-contained HTML page (a new file)" },
      json("print the brief as JSON (the same content as the text)"),
      { flags: "--agents", help: "instead: per agent and model, attempts, merged first time, 'done' said while a gate failed, tamper and scope refusals, questions, cost per merged packet" },
    ],
    after: "\nExamples:\n  factory report\n  factory report --since 2026-11-30 --html brief.html\n  factory report --json\n  factory report --agents",
    run: async ({ cwd, output }, opts) =>
      (await import("./commands/report.js")).report({
        cwd,
        output,
        json: Boolean(opts.json),
        agents: Boolean(opts.agents),
        ...(opts.since !== undefined ? { since: opts.since } : {}),
        ...(opts.html !== undefined ? { html: opts.html } : {}),
      }),
  }),
  command<{ json?: boolean }, [string]>({
    name: "show",
    description: "one packet for a person: attempts, agent calls and costs, gates with their output, review rulings, decisions",
    arguments: [["<id>"]],
    options: [json("print JSON: the packet's state, attempts, cost, reason, next command and every ledger event")],
    after: "\nExample:\n  factory show P01",
    run: async ({ cwd, output }, opts, id) => (await import("./commands/show.js")).show({ cwd, id, output, json: Boolean(opts.json) }),
  }),
  command<{ models: boolean; guards: boolean; reviewer?: boolean; json?: boolean }>({
    name: "doctor",
    after: "\nExamples:\n  factory doctor\n  factory doctor --no-models --no-guards\n  factory doctor --reviewer",
    description: "every check `run` makes before it claims anything, then proof that each guard and tests gate fires on a synthetic violation in a scratch worktree",
    options: [
      { flags: "--no-models", help: "do not ask each tier's model its one tiny question" },
      { flags: "--no-guards", help: "do not prove the guards (the proof runs each tests gate's suite five times, once outside the sandbox)" },
      {
        flags: "--reviewer",
        help: "also run the reviewer canary: each reviewer tier reviews a queued packet with nothing implemented, and must rule nothing held (one paid review call per tier)",
      },
      json("print the checks and proofs as JSON on stdout (schema, checks, proofs, exit); the lines to read go to stderr"),
    ],
    run: async ({ cwd, output, interruptible }, opts) => {
      const signal = interruptible();
      return (await import("./commands/doctor.js")).doctor({ cwd, models: opts.models, guards: opts.guards, reviewer: Boolean(opts.reviewer), output, signal, json: Boolean(opts.json) });
    },
  }),
  command<{ dir?: string }>({
    name: "demo",
    after: "\nExamples:\n  factory demo\n  factory demo --dir /tmp/factory-demo",
    description: "set up the bundled sample repository and run the factory on it (no API key)",
    options: [{ flags: "--dir <path>", help: "where to create the sample repository (default: a new temp dir)" }],
    run: async ({ output, interruptible }, opts) => {
      const signal = interruptible();
      return (await import("./commands/demo.js")).demo({ dir: opts.dir, output, signal });
    },
  }),
];

/** The first git reads of `status` and `plan`, started before their modules load (see commands/early.ts). */
async function earlyReads(cwd: string): Promise<import("./commands/early.js").EarlyReads> {
  return (await import("./commands/early.js")).startEarlyReads(cwd);
}

/** A number from the command line, checked like the config's numbers: a usage error (exit 2) otherwise. */
export function parseNumber(value: string, bounds: { min?: number; max?: number; integer?: boolean } = {}): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) throw new InvalidArgumentError(`"${value}" is not a number`);
  if (bounds.integer && !Number.isInteger(number)) throw new InvalidArgumentError(`"${value}" is not a whole number`);
  if (bounds.min !== undefined && number < bounds.min) throw new InvalidArgumentError(`must be at least ${bounds.min}, not ${value}`);
  if (bounds.max !== undefined && number > bounds.max) throw new InvalidArgumentError(`must be at most ${bounds.max}, not ${value}`);
  return number;
}
