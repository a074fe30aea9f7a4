import { posix, relative, resolve } from "node:path";
import type { Output } from "../log/output.js";
import { RUNS_DIR } from "../loop/context.js";
import { placeProposals, type Verdict, type WrittenFile } from "../planning/cut.js";
import { existingQueue, loadForCut, printVerdicts, sandboxProblem, specAtTip } from "./cut.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { packetContext } from "./workspace.js";

export interface DraftOptions {
  cwd: string;
  /** The spec the packet is cut from (committed): its last commit at the tip is the pin the packet must carry. */
  spec: string;
  /** Where the packet file goes: `packets/<name>.toml`. */
  file: string;
  /** The packet file's text (TOML). */
  packet: string;
  /** Planted files, at their repository paths under `packets/supplied/<ID>/`. */
  planted: readonly { path: string; content: string }[];
  output: Output;
  signal: AbortSignal;
}

/**
 * A packet someone wrote (a person's coding session, through `factory mcp`), judged exactly as `factory cut`
 * judges a planner's proposal (the packet rules, its pin to the spec, no repeated id, file or goal, its
 * planted tests collected and failing at the tip) and, when accepted, written into the checkout untracked.
 * Nothing is committed or queued. Exit 0 when accepted, 1 when refused, 2 for bad input.
 */
export async function draft(options: DraftOptions): Promise<{ code: ExitCode; verdicts: Verdict[] }> {
  const { output } = options;
  const fail = (message: string) => {
    output.err(`draft_packet: ${message}`);
    return { code: EXIT.invalid, verdicts: [] };
  };
  const file = posix.normalize(options.file);
  if (!/^packets\/[^/]+\.toml$/.test(file)) return fail(`${options.file}: a packet file is packets/<name>.toml`);
  const bad = options.planted.find((entry) => !posix.normalize(entry.path).startsWith("packets/supplied/") || posix.normalize(entry.path).split("/").includes(".."));
  if (bad) return fail(`${bad.path}: a planted file goes under packets/supplied/<ID>/`);
  const load = await loadForCut(options.cwd, output);
  if (!load) return fail("nothing was drafted; fix the problems above (`factory lint` lists them).");
  const { workspace, config } = load;
  const spec = await specAtTip(workspace, options.cwd, options.spec);
  if (!spec.ok) return fail(spec.problem);
  const sandbox = await sandboxProblem(workspace.root, config);
  if (sandbox) return fail(sandbox);
  const runDir = resolve(workspace.root, RUNS_DIR, `draft-${new Date().toISOString().replaceAll(":", "-")}`);
  const written: WrittenFile[] = options.planted.map((entry) => ({ path: posix.normalize(entry.path), mode: "100644", bytes: Buffer.from(entry.content) }));
  const result = await placeProposals(
    { root: workspace.root, config, signal: options.signal },
    { spec, tip: workspace.tip, runDir, existing: await existingQueue(workspace), context: packetContext(config) },
    { sources: [{ file, text: options.packet }], written, notes: [] },
  );
  if (!result.ok) {
    output.err(`draft_packet: ${result.problem}`);
    return { code: EXIT.halted, verdicts: [] };
  }
  await printVerdicts(output, result.verdicts, relative(workspace.root, runDir), "No packet was drafted.");
  for (const note of result.notes) output.err(`note: ${note}`);
  return { code: result.verdicts.every((verdict) => verdict.accepted) ? EXIT.ok : EXIT.halted, verdicts: result.verdicts };
}
