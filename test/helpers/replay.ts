import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ReplayedStep, type ReplayStep, writeReplayQueue } from "../../scripts/replay-queue.mjs";
import { type CliResult, runCliAsync } from "./cli.js";
import { makeRepo, type TestRepo } from "./git-repo.js";
import { SCRIPTED_AGENT } from "./loop-repo.js";
import { publishedPackage } from "./published.js";

/**
 * A replay of published history: consecutive versions of an npm package (downloaded at test time, cached,
 * never committed) become a repository whose base is the first version's tree, and each later version one
 * packet — its changed test files planted exactly as published, a scripted implementer that applies exactly
 * its other changes, a reviewer that accepts — run through `factory run` (the built CLI).
 */
export interface PublishedReplay {
  name: string;
  /** Oldest first: the first is the base, each later one a step. */
  versions: string[];
  /** The package's directory that is the project (gyp-next inside node-gyp: "gyp"); the whole package by default. */
  root?: string;
  /** The target's `.factory/config.toml`, without agents and tiers (the replay adds its scripted one). */
  config: string;
  isTest(path: string): boolean;
  isSupport?(path: string): boolean;
  /** Files of the replay's own beside the package (a runner's config), committed with the base; not compared with any version. */
  extraFiles?: Record<string, string>;
}

export interface ReplayedPacket extends ReplayedStep {
  state: string;
  attempts: number;
  reason?: string;
}

export interface Replay {
  run: CliResult;
  steps: ReplayedPacket[];
  repo: TestRepo;
  /** The paths where the target's main differs from `version`'s tree (content only; the queue and the factory's files aside). */
  differsFrom(version: string): string[];
  cleanup(): void;
}

export type ReplayResult = { ok: true; replay: Replay } | { ok: false; reason: string };

/** Replays the versions; `{ ok: false }` with the reason when a version cannot be downloaded (no registry). */
export async function replayPublished(input: PublishedReplay): Promise<ReplayResult> {
  const trees = new Map<string, Map<string, Buffer>>();
  for (const version of input.versions) {
    const fetched = publishedPackage(input.name, version);
    if (!fetched.ok) return fetched;
    trees.set(version, readTree(input.root ? join(fetched.dir, input.root) : fetched.dir));
  }
  const [base, ...later] = input.versions as [string, ...string[]];
  const repo = makeRepo({ initialCommit: false });
  const scratch = mkdtempSync(join(tmpdir(), "factory-replay-"));
  const scriptFile = join(scratch, "script.json");
  for (const [path, content] of trees.get(base) ?? []) repo.write(path, content.toString("utf8"));
  for (const [path, text] of Object.entries(input.extraFiles ?? {})) repo.write(path, text);
  repo.write("REPLAY-SPEC.md", `Replay of ${input.name}'s published versions ${input.versions.join(", ")}.\n`);
  repo.write(
    ".factory/config.toml",
    `${input.config}\n[agents.replay]\nkind = "command"\nrun = "node ${SCRIPTED_AGENT} ${scriptFile}"\n[tiers]\nstandard = { agent = "replay", model = "published" }\nadvanced = { agent = "replay", model = "published" }\n`,
  );
  // The factory's state and the runners' caches, without touching the project's own .gitignore.
  appendFileSync(join(repo.dir, ".git", "info", "exclude"), "\n.factory/state/\n.factory/runs/\n.factory/worktrees/\n__pycache__/\n*.pyc\nnode_modules/\n");
  const spec = repo.commit(`replay: ${input.name} ${base}, the spec and the factory's config`);

  const steps: ReplayStep[] = [];
  let previous = trees.get(base) ?? new Map<string, Buffer>();
  for (const version of later) {
    const tree = trees.get(version) ?? new Map<string, Buffer>();
    const changes: ReplayStep["changes"] = [];
    for (const [path, content] of tree) if (!previous.get(path)?.equals(content)) changes.push({ path, text: content.toString("utf8") });
    for (const path of previous.keys()) if (!tree.has(path)) changes.push({ path });
    steps.push({ label: `${input.name} ${version}`, subject: `published ${version}`, changes });
    previous = tree;
  }
  const written = writeReplayQueue({ target: repo.dir, spec, specPath: "REPLAY-SPEC.md", scriptFile, steps, isTest: input.isTest, isSupport: input.isSupport ?? (() => false) });
  repo.commit("replay: the queue");

  const run = await runCliAsync(["run"], repo.dir, {}, 600_000);
  const status = JSON.parse((await runCliAsync(["status", "--json"], repo.dir)).stdout || "{}") as { packets?: { id: string; state: string; attempts_used: number; reason?: string }[] };
  const states = new Map((status.packets ?? []).map((packet) => [packet.id, packet]));
  return {
    ok: true,
    replay: {
      run,
      repo,
      steps: written.map((step) => {
        const packet = states.get(step.id);
        return { ...step, state: packet?.state ?? "?", attempts: packet?.attempts_used ?? 0, ...(packet?.reason ? { reason: packet.reason } : {}) };
      }),
      differsFrom(version) {
        const want = trees.get(version) ?? new Map<string, Buffer>();
        const listed = repo.git("ls-tree", "-r", "-z", "--name-only", "main").split("\0").filter(Boolean);
        const ours = listed.filter((path) => !path.startsWith("packets/") && !path.startsWith(".factory/") && path !== "REPLAY-SPEC.md" && !(path in (input.extraFiles ?? {})));
        const differs = ours.filter((path) => !want.get(path)?.equals(execFileSync("git", ["show", `main:${path}`], { cwd: repo.dir, maxBuffer: 64 * 1024 * 1024 })));
        return [...differs, ...[...want.keys()].filter((path) => !ours.includes(path))].sort();
      },
      cleanup() {
        repo.cleanup();
        rmSync(scratch, { recursive: true, force: true });
      },
    },
  };
}

/** Every file under `dir`, by its path relative to it. */
function readTree(dir: string, prefix = ""): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(join(dir, prefix)).sort()) {
    const path = prefix ? `${prefix}/${entry}` : entry;
    if (statSync(join(dir, path)).isDirectory()) for (const [inner, content] of readTree(dir, path)) files.set(inner, content);
    else files.set(path, readFileSync(join(dir, path)));
  }
  return files;
}
