import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "../gates/paths.js";
import { commitAll, initRepository } from "../git/repo.js";
import { foldLedger, type PacketRecord } from "../ledger/fold.js";
import { readLedger } from "../ledger/store.js";
import { type Output, paint } from "../log/output.js";
import { checkSandbox, SANDBOX_HELP } from "../process/sandbox.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { lint } from "./lint.js";
import { plan } from "./plan.js";
import { run } from "./run.js";
import { status } from "./status.js";

export interface DemoOptions {
  /** Where to create the sample repository; a new temp dir when undefined. */
  dir: string | undefined;
  output: Output;
  signal: AbortSignal;
}

/** The bundled sample: `repo/` is the first commit, `queue/` becomes `packets/` in the second. */
export const SAMPLE_DIR = fileURLToPath(new URL("../../sample/", import.meta.url));
const FACTORY_BIN = fileURLToPath(new URL("../../bin/factory.js", import.meta.url));

/**
 * Sets up the sample repository and shows the factory on it. The repository
 * is kept (its path is printed) so the commands can be tried on it afterwards.
 */
export async function demo(options: DemoOptions): Promise<ExitCode> {
  const { output } = options;
  const dir = options.dir ? resolve(options.dir) : await mkdtemp(join(tmpdir(), "factory-demo-"));
  if (options.dir) {
    await mkdir(dir, { recursive: true });
    if ((await readdir(dir)).length > 0) {
      output.err(`${dir}: not empty; give \`factory demo --dir\` a new or empty directory`);
      return EXIT.invalid;
    }
  }
  const sandbox = await checkSandbox(dir);
  await setUpSample(dir, sandbox.ok ? "bwrap" : "none");
  output.out(paint(output, "bold", `Sample repository: ${dir}`));
  if (!sandbox.ok) {
    output.err(
      `note: the sandbox cannot start here (${sandbox.reason}), so the demo runs its bundled scripted agent without it ([sandbox] kind = "none"). Before running real agents: ${SANDBOX_HELP.split(", or set")[0]}.`,
    );
  }
  output.out("It holds a small JavaScript library, its spec, and four packets in packets/, run by a scripted agent.\n");

  // `factory run` halts with exit 1 here on purpose: D04's agent edits a planted test, so D04 blocks.
  const steps: [string, () => Promise<ExitCode>, ExitCode][] = [
    ["factory lint", () => lint({ cwd: dir, ids: [], json: false, output }), EXIT.ok],
    ["factory plan", () => plan({ cwd: dir, json: false, output }), EXIT.ok],
    ["factory run", () => run({ cwd: dir, once: false, packet: undefined, maxCost: undefined, concurrency: undefined, output, signal: options.signal }), EXIT.halted],
    ["factory status", () => status({ cwd: dir, id: undefined, json: false, output }), EXIT.ok],
  ];
  for (const [title, step, expected] of steps) {
    output.out(paint(output, "bold", `$ ${title}`));
    const code = await step();
    output.out("");
    if (code !== expected) {
      output.err(`demo: \`${title}\` exited ${code} (expected ${expected}); the sample repository is at ${dir}`);
      return code === EXIT.ok ? EXIT.halted : code;
    }
  }
  const { events } = await readLedger(dir);
  const happened = demoOutcome(foldLedger(events).packets);
  output.out(["What happened, from the ledger:", ...happened.lines].join("\n"));
  if (!happened.kept) {
    output.err(`demo: the run did not end as the demo promises (above); the sample repository is at ${dir}, and \`factory status\` there shows why`);
    return EXIT.halted;
  }
  output.out(
    [
      "",
      `Try it yourself: cd ${dir}`,
      `  node ${FACTORY_BIN} status D04       # why it is blocked, event by event`,
      `  node ${FACTORY_BIN} approve D03      # the human gate: type D03 to merge it`,
      "  git log --format='%s%n%b' main     # one commit per merged packet, with its trailers",
    ].join("\n"),
  );
  return EXIT.ok;
}

/** What the demo promises of each packet: its state after the run, and the attempts it took. */
export const DEMO_PROMISES: readonly { id: string; state: string; attempts: number; says: string }[] = [
  { id: "D01", state: "merged", attempts: 1, says: "merged first time" },
  { id: "D02", state: "merged", attempts: 2, says: "its first attempt fails its planted test; merged on the retry" },
  { id: "D03", state: "awaiting_human", attempts: 1, says: 'passes everything and waits for a person (gate = "human")' },
  { id: "D04", state: "blocked", attempts: 2, says: "its agent edits its planted test: the untouched gate fails both attempts, blocked, halting the queue" },
];

/** Pure: a line per packet of what happened to it, from the ledger, and whether every one ended as the demo promises. */
export function demoOutcome(packets: ReadonlyMap<string, PacketRecord>): { lines: string[]; kept: boolean } {
  const seen = DEMO_PROMISES.map((promise) => ({ promise, record: packets.get(promise.id) }));
  return {
    lines: seen.map(({ promise, record }) => `  ${promise.id}: ${record ? outcomeOf(record) : "never claimed"}${keeps(promise, record) ? "" : `  (the demo promises: ${promise.says})`}`),
    kept: seen.every(({ promise, record }) => keeps(promise, record)),
  };
}

/** Pure: whether a packet ended as the demo promises. */
function keeps(promise: (typeof DEMO_PROMISES)[number], record: PacketRecord | undefined): boolean {
  return record?.status.state === promise.state && record.attemptsUsed === promise.attempts;
}

/** Pure: one line of what happened to a packet, from its record. */
export function outcomeOf(record: PacketRecord): string {
  const tries = `${record.attemptsUsed} attempt${record.attemptsUsed === 1 ? "" : "s"}`;
  switch (record.status.state) {
    case "merged":
      return `merged after ${tries}`;
    case "awaiting_human":
      return `passed every gate and the review after ${tries}; waits for a person (factory approve ${record.id})`;
    case "blocked":
      return `blocked after ${tries}: ${record.reason ?? "no reason recorded"}`;
    default:
      return `${record.status.state} after ${tries}${record.reason ? `: ${record.reason}` : ""}`;
  }
}

/** Two commits: the project with its spec, then the queue pinned to that commit. */
export async function setUpSample(dir: string, sandbox: "bwrap" | "none" = "bwrap"): Promise<{ specCommit: string; queueCommit: string }> {
  const agent = join(SAMPLE_DIR, "agent", "scripted-agent.mjs");
  const script = join(SAMPLE_DIR, "agent", "demo-script.json");
  await cp(join(SAMPLE_DIR, "repo"), dir, { recursive: true });
  await substitute(join(dir, ".factory", "config.toml"), { AGENT: tomlPath(agent), SCRIPT: tomlPath(script), SANDBOX: sandbox });
  await initRepository(dir, { branch: "main", name: "factory demo", email: "demo@factory.invalid" });
  const specCommit = await commitAll(dir, "tally: library skeleton and spec");
  await cp(join(SAMPLE_DIR, "queue"), join(dir, "packets"), { recursive: true });
  for (const name of await readdir(join(dir, "packets"))) {
    if (/\.(toml|md)$/.test(name)) await substitute(join(dir, "packets", name), { SPEC_COMMIT: specCommit });
  }
  const queueCommit = await commitAll(dir, "packets: the demo queue");
  return { specCommit, queueCommit };
}

/** A path inside a TOML basic string that a shell then reads: quoted for the shell, escaped for TOML. */
function tomlPath(path: string): string {
  return JSON.stringify(shellQuote(path)).slice(1, -1);
}

async function substitute(file: string, values: Record<string, string>): Promise<void> {
  let text = await readFile(file, "utf8");
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  await writeFile(file, text);
}
