#!/usr/bin/env node
// A scripted stand-in for a coding agent, speaking the factory's `command`
// agent protocol (docs/reference/command-agent-protocol.md). It is driven by a
// JSON script, `node scripted-agent.mjs <script.json>`:
//
//   { "<packet id>": {
//       "implementer": [ <step for attempt 1>, <step for attempt 2>, ... ],   // the last one repeats
//       "reviewer":    [ <step>, ... ],
//       "assessor":    [ <step> ] } }                                        // factory assess (attempt 0)
// and under "cut": { "planner": [ <step> ] } for factory cut (its "write" paths under .factory/cut/).
//
// A step may: "write" {path: text}, "append" {path: text}, "delete" [paths],
// set "result" (an object merged into the default result or review, or null
// to write none, or a string written as-is), "invariants" (reviewer: a status
// for all, or {id: status}), "evidence" ("path:line" for all rulings),
// "verdict", "findings", "ruling" (assessor), "stdout", "cost" (reported as cost_usd),
// "run" (a shell command run in the worktree after the edits, as an agent's tool call would),
// "exit" (exit code), "sleep" (ms), "hang" (never finish, print nothing),
// "rateLimitMs" (the first time the step runs, change nothing and report a rate limit that resets
// this many ms from now; the factory's repeat of the call, FACTORY_REPEAT > 0, does the step),
// and "correction" (the step used in the contract-correction round).
import { execSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const env = process.env;
const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const role = env.FACTORY_ROLE;
const packet = env.FACTORY_PACKET;
const attempt = Number(env.FACTORY_ATTEMPT);
const round = Number(env.FACTORY_ROUND ?? "0");
const prompt = readFileSync(env.FACTORY_PROMPT_FILE, "utf8");

const steps = script[packet]?.[role] ?? [{}];
let step = steps[Math.max(1, Math.min(attempt, steps.length)) - 1] ?? {};
if (round > 0 && step.correction) step = step.correction;

if (step.rateLimitMs && env.FACTORY_REPEAT === "0") {
  process.stdout.write(`${JSON.stringify({ model: env.FACTORY_MODEL, rate_limited_until: new Date(Date.now() + step.rateLimitMs).toISOString() })}\n`);
  process.exit(0);
}

const cwd = process.cwd();
for (const [path, text] of Object.entries(step.write ?? {})) {
  mkdirSync(dirname(join(cwd, path)), { recursive: true });
  writeFileSync(join(cwd, path), text);
}
for (const [path, text] of Object.entries(step.append ?? {})) appendFileSync(join(cwd, path), text);
for (const path of step.delete ?? []) rmSync(join(cwd, path), { force: true });
if (step.run) execSync(step.run, { cwd, stdio: ["ignore", "ignore", "inherit"] });

if (step.hang) {
  setInterval(() => {}, 1_000_000);
} else {
  // The planner's output is the files it writes; it has no output file of its own.
  const output = role === "reviewer" ? review(step) : role === "assessor" ? assessment(step) : role === "planner" ? null : result(step);
  if (output !== null) {
    mkdirSync(dirname(env.FACTORY_OUTPUT), { recursive: true });
    writeFileSync(env.FACTORY_OUTPUT, typeof output === "string" ? output : JSON.stringify(output, null, 2));
  }
  const finish = () => {
    if (step.stdout) process.stdout.write(`${step.stdout}\n`);
    process.stdout.write(`${JSON.stringify({ cost_usd: step.cost ?? 0.01, model: env.FACTORY_MODEL, session_id: `scripted-${packet}-${attempt}` })}\n`);
    process.exitCode = step.exit ?? 0;
  };
  if (step.sleep) setTimeout(finish, step.sleep);
  else finish();
}

function result(step) {
  if (step.result === null) return null;
  if (typeof step.result === "string") return step.result;
  return {
    packet,
    status: "complete",
    summary: `Scripted work on ${packet}, attempt ${attempt}.`,
    verification: { tests: "all pass, trust me" },
    ...(step.result ?? {}),
  };
}

function review(step) {
  if (step.result === null) return null;
  if (typeof step.result === "string") return step.result;
  // The reviewer prompt ends with a JSON template naming every invariant.
  const blocks = [...prompt.matchAll(/```json\n([\s\S]*?)\n```/g)];
  const template = JSON.parse(blocks.at(-1)?.[1] ?? "{}");
  const changed = [...prompt.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((match) => match[1]).filter((path) => !/test/.test(path));
  const evidence = step.evidence ?? `${changed[0] ?? "README.md"}:1`;
  const statusOf = (id) => (typeof step.invariants === "object" && step.invariants !== null ? (step.invariants[id] ?? "held") : (step.invariants ?? "held"));
  return {
    packet,
    verdict: step.verdict ?? "accept",
    invariants: (template.invariants ?? []).map(({ id }) => ({ id, status: statusOf(id), evidence })),
    findings: step.findings ?? [],
    ...(step.result ?? {}),
  };
}

function assessment(step) {
  if (step.result === null) return null;
  if (typeof step.result === "string") return step.result;
  return { packet, ruling: step.ruling ?? "ready", findings: step.findings ?? [], ...(step.result ?? {}) };
}
