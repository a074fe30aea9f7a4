#!/usr/bin/env node
// Replays a project's real upstream history through the factory, as a team would have queued it: one packet
// per upstream commit, each commit's changed test files planted exactly as upstream changed them (its changed
// data files beside the tests planted as support files), and a scripted implementer that applies exactly
// the commit's other changes. Every honest step should merge first time and leave main equal to upstream.
//
//   node scripts/replay-upstream.mjs --repo <git dir or clone> --base <commit> --steps N --config <config.toml>
//        [--tests <regex>] [--support <regex>] [--skip <commit,…>] [--dir <where to build the target>] [--keep]
//
// --tests: which changed paths are test files to plant (default: pytest's and vitest's naming conventions);
// --support: which changed paths are planted as support files (default: anything else under a tests folder);
// --skip: upstream commits to fold into the next step instead of replaying as a packet of their own.
// It prints one line per step (merged, or how it stopped) and whether main equals upstream at the end; it
// exits 1 when a step did not merge or the trees differ. It needs the built CLI (npm run build).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeReplayQueue } from "./replay-queue.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const FACTORY = join(here, "..", "bin", "factory.js");
const AGENT = join(here, "..", "sample", "agent", "scripted-agent.mjs");

const { values } = parseArgs({
  options: {
    repo: { type: "string" },
    base: { type: "string" },
    steps: { type: "string", default: "5" },
    config: { type: "string" },
    tests: { type: "string", default: "(^|/)(test_[^/]*\\.py|[^/]*_test\\.py|[^/]*\\.(test|spec)\\.[cm]?[jt]sx?)$" },
    support: { type: "string", default: "(^|/)(tests?|__tests__)/" },
    skip: { type: "string", default: "" },
    dir: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
if (!values.repo || !values.base || !values.config) {
  console.error("usage: replay-upstream.mjs --repo <git dir> --base <commit> --steps N --config <config.toml> [--tests re] [--support re] [--skip c,…] [--dir d] [--keep]");
  process.exit(2);
}

const git = (cwd, ...args) => execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
const testFile = new RegExp(values.tests);
const supportFile = new RegExp(values.support);
const skipped = new Set(values.skip.split(",").filter(Boolean));

const work = values.dir ?? mkdtempSync(join(tmpdir(), "factory-replay-"));
const target = join(work, "target");
const scriptFile = join(work, "script.json");
mkdirSync(work, { recursive: true });
execFileSync("git", ["clone", "-q", "--no-checkout", values.repo, target]);
git(target, "checkout", "-q", "-B", "main", values.base);
git(target, "remote", "remove", "origin");
git(target, "config", "user.name", "replay");
git(target, "config", "user.email", "replay@factory.invalid");
git(target, "config", "commit.gpgsign", "false");
git(target, "config", "gc.auto", "0");

// The upstream commits after the base, oldest first, along the first parent.
const all = git(values.repo, "rev-list", "--first-parent", "--reverse", `${values.base}..HEAD`).split("\n").filter(Boolean);
const commits = [];
for (const commit of all) {
  if (commits.filter((step) => !skipped.has(step)).length >= Number(values.steps)) break;
  commits.push(commit);
}

// The queue: a spec of the replay's own (upstream files change under it), the config, and one packet per step.
writeFileSync(join(target, "REPLAY-SPEC.md"), "Replay of upstream history.\n");
mkdirSync(join(target, ".factory"), { recursive: true });
mkdirSync(join(target, "packets"), { recursive: true });
writeFileSync(
  join(target, ".factory", "config.toml"),
  `${readFileSync(values.config, "utf8")}\n[agents.replay]\nkind = "command"\nrun = "node ${AGENT} ${scriptFile}"\n[tiers]\nstandard = { agent = "replay", model = "upstream" }\nadvanced = { agent = "replay", model = "upstream" }\n`,
);
const ignore = join(target, ".git", "info", "exclude"); // the factory's state dirs, without touching the project's own .gitignore
writeFileSync(ignore, `${readFileSync(ignore, "utf8")}\n.factory/state/\n.factory/runs/\n.factory/worktrees/\n`);
git(target, "add", "-A");
git(target, "commit", "-q", "-m", "replay: the spec and the factory's config");
const spec = git(target, "rev-parse", "HEAD").trim();

const replayed = [];
let from = values.base;
for (const commit of commits) {
  if (skipped.has(commit)) continue;
  const changes = git(values.repo, "diff", "--no-renames", "--name-status", "-z", from, commit).split("\0").filter(Boolean);
  const step = { label: commit.slice(0, 10), commit, subject: git(values.repo, "log", "-1", "--format=%s", commit).trim(), changes: [] };
  for (let at = 0; at < changes.length; at += 2) {
    const [status, path] = [changes[at], changes[at + 1]];
    step.changes.push(status === "D" ? { path } : { path, text: git(values.repo, "show", `${commit}:${path}`) });
  }
  replayed.push(step);
  from = commit;
}
const steps = writeReplayQueue({
  target,
  spec,
  specPath: "REPLAY-SPEC.md",
  scriptFile,
  steps: replayed,
  isTest: (path) => testFile.test(path),
  isSupport: (path) => supportFile.test(path),
}).map((step, at) => ({ ...step, commit: replayed[at].commit }));
git(target, "add", "-A");
git(target, "commit", "-q", "-m", "replay: the queue");

const started = Date.now();
const run = spawnSync(process.execPath, [FACTORY, "run"], { cwd: target, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 64 * 1024 * 1024 });
writeFileSync(join(work, "run.log"), `${run.stdout}\n${run.stderr}`);
const status = JSON.parse(spawnSync(process.execPath, [FACTORY, "status", "--json"], { cwd: target, encoding: "utf8" }).stdout || "{}");
const states = new Map((status.packets ?? []).map((packet) => [packet.id, packet]));
let ok = run.status === 0;
for (const step of steps) {
  const packet = states.get(step.id);
  const line = packet?.state === "merged" ? `merged (attempt ${packet.attempts_used})` : `${packet?.state ?? "?"}${packet?.reason ? `: ${packet.reason}` : ""}`;
  if (packet?.state !== "merged") ok = false;
  console.log(`${step.id} ${step.commit.slice(0, 10)} ${step.subject.slice(0, 60)} [${step.planted} planted, ${step.written} written] → ${line}`);
}
const last = from;
const differs = git(target, "diff", "--stat", last, "main", "--", ".", ":(exclude)packets", ":(exclude).factory", ":(exclude)REPLAY-SPEC.md").trim();
console.log(differs ? `main differs from upstream ${last.slice(0, 10)}:\n${differs}` : `main equals upstream ${last.slice(0, 10)}`);
console.log(`factory run: exit ${run.status}, ${((Date.now() - started) / 1000).toFixed(1)} s; log: ${join(work, "run.log")}`);
if (differs) ok = false;
if (!values.keep && !values.dir) {
  const { worktreesDir } = await import("../dist/loop/context.js"); // the factory keeps worktrees outside the target
  rmSync(worktreesDir(target), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
