import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { agentProgramPath } from "../agents/shell-program.js";
import type { AgentAdapter } from "../agents/types.js";
import type { Agent, Tier } from "../config/types.js";
import type { TestResult } from "../gates/junit.js";
import { plantedTestFiles } from "../gates/test-compare.js";
import { createWorktree, removeWorktree, resetWorktreeTo, restoreWorktree } from "../git/worktree.js";
import { loadsPluginByName, steeringPart } from "../guards/runner-steering.js";
import type { Ledger } from "../ledger/ledger.js";
import { callOutsideRun } from "../loop/agent-call.js";
import { hasBaseline, measureBaseline } from "../loop/baseline.js";
import { checkInterrupted, type RunContext, surfaceOf, worktreesDir } from "../loop/context.js";
import { checkPlantedTests } from "../loop/planted-check.js";
import { installSurface, plantFiles } from "../loop/prepare.js";
import { suppliedByPacket } from "../packet/load.js";
import type { Packet, PacketContext, PacketSource, SuppliedFile } from "../packet/types.js";
import { dirEntries } from "../util/dir-entries.js";
import { cutPrompt, PLANNER_OUTPUT } from "./cut-prompt.js";
import { judgeProposals } from "./proposals.js";

/** One planted file as the planner wrote it: its repository path (under `packets/supplied/<ID>/`), mode and bytes. */
export interface WrittenFile {
  path: string;
  mode: string;
  bytes: Buffer;
}

/** What the factory ruled on one proposed packet file. */
export interface Verdict {
  file: string;
  id?: string;
  goal?: string;
  /** What its planted tests did at the tip, e.g. "3 failing" or "1 file not loading yet"; "-" when they did not run. */
  planted: string;
  accepted: boolean;
  reasons: string[];
}

export interface CutInput {
  spec: { path: string; commit: string; text: string };
  scope: string;
  tip: string;
  tier: Tier;
  agent: Agent;
  adapter: AgentAdapter;
  template?: string;
  conventions?: string;
  /** `.factory/runs/cut-<stamp>`: the planner's prompt and stream, and the refused proposals. */
  runDir: string;
  existing: { sources: readonly PacketSource[]; supplied: ReadonlyMap<string, readonly SuppliedFile[]>; packets: readonly { id: string; goal: string; file: string }[] };
  context: PacketContext;
  ledger: Ledger;
}

export type CutResult = { ok: true; verdicts: Verdict[]; notes: string[] } | { ok: false; problem: string };

/**
 * `factory cut`: the planner writes proposals in a scratch checkout of the
 * tip (in the sandbox; the user's checkout is not writable there), and the
 * factory judges each one itself, with no model: the packet rules, its pin
 * to the spec, no repeated id, file or goal, and its planted tests run at the
 * tip with the run's own planted check (every planted file collected, its
 * cases failing). Accepted packets are written into the checkout untracked,
 * never over a file that is there; refused ones under the run directory
 * with their reasons. Nothing is committed or queued.
 */
export async function cutPackets(ctx: Pick<RunContext, "root" | "config" | "signal">, input: CutInput): Promise<CutResult> {
  mkdirSync(input.runDir, { recursive: true });
  const planned = await runPlanner(ctx, input);
  if (!planned.ok) return planned;
  if (planned.sources.length === 0) return { ok: true, verdicts: [], notes: [...planned.notes, `the planner wrote no packet file under ${PLANNER_OUTPUT}/packets/`] };
  return placeProposals(ctx, input, planned);
}

/** What judging proposals needs of a cut: the spec they pin to, the tip, where refused ones go, and the queue. */
export type PlaceInput = Pick<CutInput, "spec" | "tip" | "runDir" | "existing" | "context">;

/**
 * Proposed packet files and their planted files, however they were written (a planner agent, or a person's
 * coding session through `factory mcp`), judged by the factory as a cut's are, and the accepted ones written
 * into the checkout, untracked; the refused ones under the run directory with their reasons.
 */
export async function placeProposals(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: PlaceInput,
  proposed: { sources: PacketSource[]; written: WrittenFile[]; notes: string[] },
): Promise<CutResult> {
  mkdirSync(input.runDir, { recursive: true });
  const { sources, written, notes } = proposed;
  const supplied = suppliedByPacket(written.map((file) => ({ path: file.path, mode: file.mode, sha: blobId(file.bytes) })));
  const judged = judgeProposals({ proposals: sources, supplied, existing: input.existing, context: input.context, spec: { path: input.spec.path, commit: input.spec.commit } });
  const trials = await plantedTrials(
    ctx,
    input,
    judged.flatMap((entry) => (entry.packet && entry.problems.length === 0 ? [entry.packet] : [])),
    written,
  );
  const verdicts: Verdict[] = [];
  const refused = join(input.runDir, "refused");
  const placed = new Set<string>();
  for (const entry of judged) {
    const packet = entry.packet;
    const trial = packet ? trials.get(packet.id) : undefined;
    const files = written.filter((file) => packet && file.path.startsWith(`packets/supplied/${packet.id}/`));
    const reasons = [
      ...entry.problems,
      ...files.filter((file) => file.mode === "120000").map((file) => `planted file ${file.path} is a symbolic link; write the file itself`),
      // Its planted tests are judged by running them: a planted file that steers the runner could make them fail or pass at will.
      ...files.flatMap((file) => {
        const steering = steeringPart(file.path.split("/").slice(3).join("/"));
        return steering ? [`planted file ${file.path} ${steering.what}, which could decide how its own planted tests are judged; a person writes such a file`] : [];
      }),
      // Or one that loads another by name as a plugin (a support file beside it, a module under src/): the same, by another door.
      ...files.flatMap((file) => {
        const line = file.bytes.toString("utf8").split("\n").findIndex(loadsPluginByName);
        return line >= 0
          ? [`planted file ${file.path}:${line + 1} loads a pytest plugin by name (pytest_plugins), which could decide how its own planted tests are judged; a person writes such a file`]
          : [];
      }),
      ...(trial?.problem ? [trial.problem] : []),
    ];
    const source = sources.find((candidate) => candidate.file === entry.file) as PacketSource;
    if (reasons.length === 0) {
      const clash = [source.file, ...files.map((file) => file.path)].find((path) => existsSync(join(ctx.root, path)));
      if (clash) reasons.push(`${clash} exists in your checkout; nothing of yours is overwritten: move it away and cut again`);
    }
    const accepted = reasons.length === 0;
    writeProposal(accepted ? ctx.root : refused, [{ path: source.file, mode: "100644", bytes: Buffer.from(source.text) }, ...files]);
    for (const file of files) placed.add(file.path);
    if (!accepted) writeFileSync(join(refused, `${posix.basename(source.file)}.reasons.txt`), `${reasons.join("\n")}\n`);
    verdicts.push({ file: source.file, ...(packet ? { id: packet.id, goal: packet.goal } : {}), planted: trial?.planted ?? "-", accepted, reasons });
  }
  // Planted files of no packet that parsed (its file refused, or a folder of no packet's id): kept with the refused.
  const stray = written.filter((file) => !placed.has(file.path));
  writeProposal(refused, stray);
  const ids = [...new Set(stray.map((file) => file.path.split("/")[2] ?? ""))];
  if (ids.length) notes.push(`planted files of no accepted packet (${ids.map((id) => `packets/supplied/${id}/`).join(", ")}) are kept under ${refused}`);
  return { ok: true, verdicts, notes };
}

type Planned = { ok: true; sources: PacketSource[]; written: WrittenFile[]; notes: string[] } | { ok: false; problem: string };

/** The planner's one call in a scratch checkout of the tip; its spend recorded; what it wrote under its output directory read back. */
async function runPlanner(ctx: Pick<RunContext, "root" | "config" | "signal">, input: CutInput): Promise<Planned> {
  const worktree = join(worktreesDir(ctx.root), `_cut-${process.pid}`);
  await removeWorktree(ctx.root, worktree);
  await createWorktree(ctx.root, { path: worktree, start: input.tip });
  try {
    const outputPath = join(worktree, PLANNER_OUTPUT);
    mkdirSync(outputPath, { recursive: true });
    const prompt = cutPrompt(
      {
        spec: input.spec,
        scope: input.scope,
        existing: input.existing.packets,
        ...(input.conventions ? { conventions: input.conventions } : {}),
        tiers: ctx.config.tiers.map((tier) => tier.name),
        surfaces: ctx.config.surfaces.map((surface) => surface.name),
      },
      input.template,
    );
    const { outcome, spend } = await callOutsideRun(ctx, {
      adapter: input.adapter,
      tier: input.tier,
      role: "planner",
      packet: "cut",
      prompt,
      worktree,
      runDir: input.runDir,
      output: PLANNER_OUTPUT,
      home: join(input.runDir, "planner-home"),
      program: agentProgramPath(input.agent, ctx.root),
    });
    if (spend) await input.ledger.append([{ kind: "spent", for: `factory cut: the planner (tier ${input.tier.name}) on ${input.spec.path}`, ...spend }]);
    checkInterrupted(ctx.signal);
    if (outcome.status !== "ok")
      return { ok: false, problem: `the planner's call ended ${outcome.status}${outcome.detail ? `: ${outcome.detail}` : ""} (its output: ${relative(ctx.root, outcome.rawPath)})` };
    return { ok: true, ...readProposals(outputPath, ctx.config.limits.maxResultSizeBytes) };
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/** The packet files directly under `<output>/packets/` and every file under `<output>/packets/supplied/`, as repository paths; anything else is named in a note. */
function readProposals(output: string, maxBytes: number): { sources: PacketSource[]; written: WrittenFile[]; notes: string[] } {
  const sources: PacketSource[] = [];
  const written: WrittenFile[] = [];
  const notes: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of dirEntries(dir)) {
      const full = join(dir, entry.name);
      const path = relative(output, full).split("\\").join("/");
      if (entry.isDirectory()) {
        walk(full);
        continue;
      }
      const stat = lstatSync(full);
      const isLink = stat.isSymbolicLink();
      if (!isLink && !stat.isFile()) continue;
      if (stat.size > maxBytes) {
        notes.push(`${path} is larger than [limits] max_result_size; it was not read`);
        continue;
      }
      if (/^packets\/[^/]+\.(toml|md)$/.test(path) && !isLink) sources.push({ file: path, text: readFileSync(full, "utf8") });
      else if (path.startsWith("packets/supplied/"))
        written.push(isLink ? { path, mode: "120000", bytes: Buffer.from(readlinkSync(full)) } : { path, mode: stat.mode & 0o111 ? "100755" : "100644", bytes: readFileSync(full) });
      else notes.push(`${PLANNER_OUTPUT}/${path} is neither a packet file nor a planted file; it was left out`);
    }
  };
  walk(output);
  return { sources, written: written.sort((a, b) => a.path.localeCompare(b.path)), notes };
}

/**
 * The run's planted check, at the tip, for every proposal with planted
 * tests: one scratch checkout, each surface installed and its baseline
 * measured once, then each proposal's files planted alone. For a cut, every
 * planted case must fail (a case that passes before the work proves nothing
 * of it), not only one.
 */
async function plantedTrials(
  ctx: Pick<RunContext, "root" | "config" | "signal">,
  input: PlaceInput,
  packets: readonly Packet[],
  written: readonly WrittenFile[],
): Promise<Map<string, { planted: string; problem?: string }>> {
  const trials = new Map<string, { planted: string; problem?: string }>();
  const testing = packets.filter((packet) => plantedTestFiles(packet.planted, packet.supportFiles).length > 0);
  if (testing.length === 0) return trials;
  const worktree = join(worktreesDir(ctx.root), `_cut-${process.pid}`);
  await createWorktree(ctx.root, { path: worktree, start: input.tip });
  try {
    const baselines = new Map<string, Map<string, TestResult[]> | string>();
    for (const packet of testing) {
      checkInterrupted(ctx.signal);
      const surface = surfaceOf(ctx.config, packet);
      if (!surface || !hasBaseline(surface)) continue; // parsePacket refused planted tests without a tests gate
      const runDir = join(input.runDir, "planted", packet.id);
      let baseline = baselines.get(surface.name);
      if (baseline === undefined) {
        await resetWorktreeTo(worktree, input.tip);
        const installError = await installSurface(ctx, worktree, surface, runDir);
        const measured = installError ? { ok: false as const, reason: installError } : await measureBaseline(ctx, { surface, commit: input.tip, runDir, checkout: worktree });
        baseline = measured.ok ? measured.results : `the tip's own tests do not run, so no planted test could be judged: ${measured.reason}`;
        baselines.set(surface.name, baseline);
      }
      if (typeof baseline === "string") {
        trials.set(packet.id, { planted: "-", problem: baseline });
        continue;
      }
      await resetWorktreeTo(worktree, input.tip);
      await restoreWorktree(worktree);
      const prefix = `packets/supplied/${packet.id}/`;
      const files = written.filter((file) => file.path.startsWith(prefix)).map((file) => ({ ...file, path: file.path.slice(prefix.length) }));
      await plantFiles(worktree, files, `factory cut: plant the proposed files of ${packet.id}`);
      const testFiles = plantedTestFiles(packet.planted, packet.supportFiles);
      const checked = await checkPlantedTests(ctx, { worktree, surface, baseline, testFiles, runDir, allowedPaths: packet.allowedPaths, tip: input.tip });
      if (!checked.ok) {
        trials.set(packet.id, { planted: "-", problem: checked.reason });
        continue;
      }
      const failing = checked.counts.reduce((sum, count) => sum + count.failing, 0);
      const unloaded = checked.counts.filter((count) => count.loadError).length;
      const planted = [...(failing ? [`${failing} failing`] : []), ...(unloaded ? [`${unloaded} file${unloaded === 1 ? "" : "s"} not loading yet`] : [])].join(", ");
      const passing = checked.counts.filter((count) => !count.loadError && count.failing < count.cases);
      const problem = passing.length
        ? `every planted case must fail at the tip before the work, and ${passing.map((count) => `${count.cases - count.failing} of ${count.cases} in ${count.file}`).join(", ")} pass already: such a case cannot tell the work done from not done`
        : undefined;
      trials.set(packet.id, { planted, ...(problem ? { problem } : {}) });
    }
    return trials;
  } finally {
    await removeWorktree(ctx.root, worktree);
  }
}

/**
 * Files under `base` (the checkout, or the refused directory) at their repository paths, never over a file
 * that is there (`wx`); a link is written as a file holding its target (it is refused anyway).
 */
function writeProposal(base: string, files: readonly WrittenFile[]): void {
  for (const file of files) {
    const target = join(base, file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.bytes, { mode: file.mode === "100755" ? 0o755 : 0o644, flag: "wx" });
  }
}

/** The git blob id of `bytes` (SHA-1 object format): part of a proposal's version, as for a committed packet. */
function blobId(bytes: Buffer): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}
