import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commitAll, initRepository } from "../git/repo.js";
import { paint, type Output } from "../log/output.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { lint } from "./lint.js";
import { plan } from "./plan.js";
import { status } from "./status.js";

export interface DemoOptions {
  /** Where to create the sample repository; a new temp dir when undefined. */
  dir: string | undefined;
  output: Output;
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
  await setUpSample(dir);
  output.out(paint(output, "bold", `Sample repository: ${dir}`));
  output.out("It holds a small JavaScript library, its spec, and four packets in packets/.\n");

  const steps: [string, () => Promise<ExitCode>][] = [
    ["factory lint", () => lint({ cwd: dir, ids: [], json: false, output })],
    ["factory plan", () => plan({ cwd: dir, json: false, output })],
    ["factory status", () => status({ cwd: dir, id: undefined, json: false, output })],
  ];
  for (const [title, step] of steps) {
    output.out(paint(output, "bold", `$ ${title}`));
    const code = await step();
    output.out("");
    if (code !== EXIT.ok) {
      output.err(`demo: \`${title}\` exited ${code}; the sample repository is at ${dir}`);
      return code;
    }
  }
  output.out("The run loop (implement → gates → review → merge) is not built yet: this demo stops after lint, plan and status.");
  output.out(`Try the commands yourself: cd ${dir} && node ${FACTORY_BIN} status`);
  return EXIT.ok;
}

/** Two commits: the project with its spec, then the queue pinned to that commit. */
export async function setUpSample(dir: string): Promise<{ specCommit: string; queueCommit: string }> {
  const agent = join(SAMPLE_DIR, "agent", "scripted-agent.mjs");
  await cp(join(SAMPLE_DIR, "repo"), dir, { recursive: true });
  await substitute(join(dir, ".factory", "config.toml"), { AGENT: JSON.stringify(agent).slice(1, -1) });
  await initRepository(dir, { branch: "main", name: "factory demo", email: "demo@factory.invalid" });
  const specCommit = await commitAll(dir, "tally: library skeleton and spec");
  await cp(join(SAMPLE_DIR, "queue"), join(dir, "packets"), { recursive: true });
  for (const name of await readdir(join(dir, "packets"))) {
    if (/\.(toml|md)$/.test(name)) await substitute(join(dir, "packets", name), { SPEC_COMMIT: specCommit });
  }
  const queueCommit = await commitAll(dir, "packets: the demo queue");
  return { specCommit, queueCommit };
}

async function substitute(file: string, values: Record<string, string>): Promise<void> {
  let text = await readFile(file, "utf8");
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  await writeFile(file, text);
}
