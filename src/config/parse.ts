import { isPostgresUrl, maskUrl } from "../ledger/pg-url.js";
import { MAX_ATTEMPTS, MIN_ATTEMPTS } from "../packet/types.js";
import { didYouMean, Fields, type SourceContext } from "../toml/fields.js";
import { readToml } from "../toml/read.js";
import { parseDuration } from "../util/duration.js";
import { type Problem, sortProblems } from "../util/problem.js";
import { parseSize } from "../util/size.js";
import {
  AGENT_KINDS,
  type Agent,
  type AgentKind,
  ASSESSMENT_POLICIES,
  CONFIG_PATH,
  type Config,
  DEFAULT_CLOSE_LABEL,
  DEFAULT_FORGE_API,
  DEFAULT_FORGE_POLL_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_LIMITS,
  DEFAULT_MERGE_BATCH,
  DEFAULT_MERGE_MESSAGE,
  DEFAULT_PLANNING,
  DEFAULT_REMOTE_PATIENCE_MS,
  DEFAULT_RERUNS,
  DEFAULT_RETENTION,
  DEFAULT_SANDBOX,
  type GateConfig,
  type Limits,
  type Planning,
  type RequiredCheck,
  SANDBOX_KINDS,
  type SandboxConfig,
  type Surface,
  TARGET_MODES,
  type TargetMode,
  type Tier,
} from "./types.js";

export type ConfigParse = { ok: true; config: Config } | { ok: false; problems: Problem[] };

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const MERGE_PLACEHOLDERS = ["id", "slug", "goal"];

/** Parse → normalize → validate `.factory/config.toml`, reporting every problem at once. */
export function parseConfig(source: string, file = CONFIG_PATH): ConfigParse {
  const read = readToml(source, file);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  const problems: Problem[] = [];
  const context: SourceContext = { file, source, lineOffset: 0, problems };
  const root = new Fields(context, read.table);

  const targetBranch = root.string("target_branch", { nonEmpty: true }) ?? "main";
  const surfaces = readSurfaces(root);
  const agents = readAgents(root);
  const tiers = readTiers(root, agents);
  const limits = readLimits(root);
  const merge = root.subtable("merge");
  const message = merge?.string("message", { nonEmpty: true }) ?? DEFAULT_MERGE_MESSAGE;
  for (const match of message.matchAll(/\{([^}]*)\}/g)) {
    if (!MERGE_PLACEHOLDERS.includes(match[1] ?? "")) {
      merge?.report("message", `unknown placeholder {${match[1]}}; use ${MERGE_PLACEHOLDERS.map((p) => `{${p}}`).join(", ")}`);
    }
  }
  const batch = merge?.number("batch", { min: 1, max: 16, integer: true }) ?? DEFAULT_MERGE_BATCH;
  merge?.rejectUnknown();
  const notify = root.subtable("notify");
  const notifyCommand = notify?.string("command");
  const webhook = notify?.string("webhook")?.trim() || undefined;
  if (webhook !== undefined && !isHttpUrl(webhook)) notify?.report("webhook", `${JSON.stringify(webhook)} is not an http(s) URL; write e.g. "https://hooks.slack.com/services/…"`);
  const notifyTimeoutText = notify?.raw("timeout");
  const notifyTimeoutMs = notifyTimeoutText === undefined ? DEFAULT_NOTIFY_TIMEOUT_MS : parseDuration(notifyTimeoutText);
  if (notifyTimeoutText !== undefined && notifyTimeoutMs === undefined) notify?.report("timeout", `${JSON.stringify(notifyTimeoutText)} is not a duration; write e.g. "10s"`);
  const desktop = notify?.boolean("desktop") ?? true;
  notify?.rejectUnknown();
  const sandbox = readSandbox(root);
  const retention = root.subtable("retention");
  const runsText = retention?.raw("runs");
  const runsMs = runsText === undefined ? DEFAULT_RETENTION.runsMs : parseDuration(runsText);
  if (runsText !== undefined && runsMs === undefined) retention?.report("runs", `${JSON.stringify(runsText)} is not a duration; write e.g. "14d", "36h"`);
  retention?.rejectUnknown();
  const planning = readPlanning(root, tiers);
  const ledger = readLedger(root);
  const workers = readWorkers(root);
  const testsTable = root.subtable("tests");
  const reruns = testsTable?.number("reruns", { min: 0, max: 10, integer: true }) ?? DEFAULT_RERUNS;
  testsTable?.rejectUnknown();
  const targetTable = root.subtable("target");
  const remote = targetTable?.string("remote", { nonEmpty: true })?.trim();
  if (remote !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote))
    targetTable?.report("remote", `${JSON.stringify(remote)} is not a remote's name; write the name \`git remote\` lists, e.g. "origin"`);
  const mode = targetTable?.string("mode", { nonEmpty: true })?.trim() ?? "push";
  if (!TARGET_MODES.includes(mode as TargetMode)) targetTable?.report("mode", `${JSON.stringify(mode)} is not a landing mode; write "push" or "pull-request"`);
  else if (mode === "pull-request" && remote === undefined) targetTable?.report("mode", `"pull-request" lands on a shared remote: name it too, e.g. remote = "origin"`);
  const patienceText = targetTable?.raw("patience");
  const patienceMs = patienceText === undefined ? DEFAULT_REMOTE_PATIENCE_MS : parseDuration(patienceText);
  if (patienceText !== undefined && patienceMs === undefined) targetTable?.report("patience", `${JSON.stringify(patienceText)} is not a duration; write e.g. "10m"`);
  targetTable?.rejectUnknown();
  const forge = readForge(root, mode === "pull-request");
  root.rejectUnknown();

  if (problems.length > 0) return { ok: false, problems: sortProblems(problems) };
  return {
    ok: true,
    config: {
      targetBranch,
      surfaces,
      agents,
      tiers,
      limits,
      merge: { message, batch },
      notify: { command: notifyCommand?.trim() ? notifyCommand : undefined, webhook, timeoutMs: notifyTimeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS, desktop },
      sandbox,
      retention: { runsMs: runsMs ?? DEFAULT_RETENTION.runsMs },
      planning,
      ledger,
      workers,
      tests: { reruns },
      target: { remote, mode: mode as TargetMode, patienceMs: patienceMs ?? DEFAULT_REMOTE_PATIENCE_MS },
      forge,
    },
  };
}

/** `[forge]`: the forge a pull request is opened on (GitHub's REST API); required by `[target] mode = "pull-request"`. */
function readForge(root: Fields, required: boolean): Config["forge"] {
  const fields = root.subtable("forge");
  if (!fields) {
    if (required) root.report("target", `mode = "pull-request" needs a [forge] table: kind = "github" and repo = "owner/name"`);
    return undefined;
  }
  const kind = fields.string("kind", { nonEmpty: true }) ?? "github";
  if (kind !== "github") fields.report("kind", `${JSON.stringify(kind)} is not a forge the factory speaks; write "github" (GitHub or GitHub Enterprise)`);
  const api = (fields.string("api", { nonEmpty: true }) ?? DEFAULT_FORGE_API).trim().replace(/\/+$/, "");
  if (!/^https?:\/\//.test(api)) fields.report("api", `${JSON.stringify(api)} is not an http(s) URL; write e.g. "https://api.github.com" or "https://github.example.com/api/v3"`);
  const repo = fields.string("repo", { nonEmpty: true })?.trim();
  if (repo === undefined) fields.report("repo", `name the repository the pull requests go to, e.g. repo = "acme/widgets"`);
  else if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) fields.report("repo", `${JSON.stringify(repo)} is not "owner/name"`);
  const tokenEnv = fields.string("token_env", { nonEmpty: true })?.trim() ?? "GITHUB_TOKEN";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) fields.report("token_env", `${JSON.stringify(tokenEnv)} is not an environment variable's name`);
  if (fields.raw("token") !== undefined) fields.report("token", 'a token is never written in the config: name the environment variable that holds it, token_env = "GITHUB_TOKEN"');
  const autoMerge = fields.boolean("auto_merge") ?? false;
  const requiredChecks = readRequiredChecks(fields);
  const pollText = fields.raw("poll");
  const pollMs = pollText === undefined ? DEFAULT_FORGE_POLL_MS : parseDuration(pollText);
  if (pollText !== undefined && pollMs === undefined) fields.report("poll", `${JSON.stringify(pollText)} is not a duration; write e.g. "30s"`);
  const closeLabel = fields.string("close_label", { nonEmpty: true })?.trim() ?? DEFAULT_CLOSE_LABEL;
  fields.rejectUnknown();
  return { kind: "github", api, repo: repo ?? "", tokenEnv, autoMerge, requiredChecks, pollMs: pollMs ?? DEFAULT_FORGE_POLL_MS, closeLabel };
}

/** `required_checks = ["ci", { name = "test", app = "github-actions" }]`: a check's name, or its name and the slug of the app that must report it. */
function readRequiredChecks(fields: Fields): RequiredCheck[] | undefined {
  const value = fields.raw("required_checks");
  if (value === undefined) return undefined;
  const wanted = 'an array of check names, each a string or { name = "…", app = "…" }';
  if (!Array.isArray(value)) {
    fields.report("required_checks", `must be ${wanted}`);
    return undefined;
  }
  const checks: RequiredCheck[] = [];
  value.forEach((item, index) => {
    if (typeof item === "string" && item.trim()) checks.push({ context: item.trim() });
    else if (isPinnedCheck(item)) checks.push({ context: item.name.trim(), ...(item.app === undefined ? {} : { app: item.app }) });
    else fields.report(["required_checks", index], `must be a check's name or { name = "…", app = "the app's slug, e.g. github-actions" }`);
  });
  return checks;
}

/** `{ name = "…", app = "a-slug" }`, `app` optional, nothing else. */
function isPinnedCheck(value: unknown): value is { name: string; app?: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { name, app, ...rest } = value as Record<string, unknown>;
  return typeof name === "string" && name.trim() !== "" && Object.keys(rest).length === 0 && (app === undefined || (typeof app === "string" && /^[a-z0-9][a-z0-9-]*$/.test(app)));
}

function readLedger(root: Fields): Config["ledger"] {
  const fields = root.subtable("ledger");
  if (!fields) return { url: undefined };
  const url = fields.string("url", { nonEmpty: true })?.trim();
  if (url !== undefined && !isPostgresUrl(url))
    fields.report("url", `${JSON.stringify(maskUrl(url))} is not a PostgreSQL URL; write e.g. "postgres://factory@db.internal:5432/factory" (leave it out for the file ledger)`);
  else if (url !== undefined && hasPassword(url)) {
    fields.report("url", "carries a password, and this file is committed: leave the password out and give it in ~/.pgpass, PGPASSWORD or FACTORY_LEDGER_URL");
  }
  fields.rejectUnknown();
  return { url };
}

function readWorkers(root: Fields): Config["workers"] {
  const fields = root.subtable("workers");
  if (!fields) return { leaseMs: DEFAULT_LEASE_MS };
  const text = fields.raw("lease");
  const leaseMs = text === undefined ? DEFAULT_LEASE_MS : parseDuration(text);
  if (text !== undefined && (leaseMs === undefined || leaseMs < 3_000)) fields.report("lease", `${JSON.stringify(text)} is not a lease of at least 3 seconds; write e.g. "2m"`);
  fields.rejectUnknown();
  return { leaseMs: leaseMs !== undefined && leaseMs >= 3_000 ? leaseMs : DEFAULT_LEASE_MS };
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== "";
  } catch {
    return false;
  }
}

function readSurfaces(root: Fields): Surface[] {
  const table = root.subtable("surfaces");
  if (!table) return [];
  const surfaces: Surface[] = [];
  for (const name of Object.keys(table.table)) {
    const fields = table.subtable(name);
    if (!fields) continue;
    if (!NAME.test(name)) table.report(name, `"${name}" is not a surface name: a letter, then letters, digits, "_" or "-"`);
    const dir = (fields.string("dir", { nonEmpty: true }) ?? ".").replace(/\/+$/, "") || ".";
    if (dir.startsWith("/") || dir.split("/").includes("..")) fields.report("dir", `"${dir}" must be a path inside the repository`);
    const install = fields.string("install");
    const network = fields.boolean("network") ?? false;
    const tests = fields.stringArray("tests");
    const gates: GateConfig[] = [];
    const names = new Set<string>();
    for (const gate of fields.tableArray("gates") ?? []) {
      const gateName = gate.string("name", { required: true, nonEmpty: true });
      const run = gate.string("run", { required: true, nonEmpty: true });
      const files = gate.string("files", { nonEmpty: true });
      const fix = gate.string("fix", { nonEmpty: true });
      const tests = gate.boolean("tests") ?? false;
      const timeout = gate.raw("timeout");
      const timeoutMs = timeout === undefined ? undefined : parseDuration(timeout);
      if (timeout !== undefined && timeoutMs === undefined) gate.report("timeout", durationHelp(timeout));
      if (tests && run !== undefined && !run.includes("{junit}") && !run.includes("{tap}")) {
        gate.report("run", "a tests = true gate must write JUnit XML to {junit} (or TAP to {tap}) so the factory can compare per-test results");
      }
      gate.rejectUnknown();
      if (gateName === undefined || run === undefined) continue;
      if (names.has(gateName)) gate.report("name", `duplicate gate name "${gateName}" in surface "${name}"`);
      names.add(gateName);
      gates.push({ name: gateName, run, files, fix, tests, timeoutMs });
    }
    fields.rejectUnknown();
    surfaces.push({ name, dir, install: install?.trim() ? install : undefined, gates, network, ...(tests?.length ? { tests } : {}) });
  }
  return surfaces;
}

function readAgents(root: Fields): Record<string, Agent> {
  const table = root.subtable("agents");
  const agents: Record<string, Agent> = {};
  if (!table) return agents;
  for (const name of Object.keys(table.table)) {
    const fields = table.subtable(name);
    if (!fields) continue;
    const kindText = fields.string("kind", { required: true });
    let kind: AgentKind | undefined;
    if (kindText !== undefined) {
      kind = AGENT_KINDS.find((candidate) => candidate === kindText);
      if (!kind) fields.report("kind", `unknown agent kind "${kindText}"${didYouMean(kindText, AGENT_KINDS)}; use one of ${AGENT_KINDS.join(", ")}`);
    }
    const bin = fields.string("bin", { nonEmpty: true });
    const run = fields.string("run", { nonEmpty: true });
    if (kind === "command" && run === undefined) fields.report("run", 'a "command" agent needs run = "<shell command>"');
    if (kind !== undefined && kind !== "command" && run !== undefined) {
      fields.report("run", `only "command" agents take run; a "${kind}" agent takes bin`);
    }
    const env: Record<string, string> = {};
    const envTable = fields.subtable("env");
    for (const [key, value] of Object.entries(envTable?.table ?? {})) {
      envTable?.raw(key);
      if (typeof value === "string") env[key] = value;
      else envTable?.report(key, "must be a string");
    }
    const maxTurns = fields.number("max_turns", { min: 1, integer: true });
    const args = fields.stringArray("args") ?? [];
    const prices: Agent["prices"] = {};
    const priceTable = fields.subtable("prices");
    for (const model of Object.keys(priceTable?.table ?? {})) {
      const price = priceTable?.subtable(model);
      if (!price) continue;
      const input = price.number("input", { min: 0 });
      const output = price.number("output", { min: 0 });
      const cachedInput = price.number("cached_input", { min: 0 });
      if (input === undefined) price.report("input", "is required: USD per million input tokens");
      if (output === undefined) price.report("output", "is required: USD per million output tokens");
      price.rejectUnknown();
      if (input !== undefined && output !== undefined) prices[model] = { input, output, cachedInput };
    }
    fields.rejectUnknown();
    if (kind) agents[name] = { name, kind, bin, run, env, maxTurns, args, prices };
  }
  return agents;
}

function readTiers(root: Fields, agents: Record<string, Agent>): Tier[] {
  const table = root.subtable("tiers");
  const tiers: Tier[] = [];
  if (!table) return tiers;
  for (const name of Object.keys(table.table)) {
    const fields = table.subtable(name);
    if (!fields) continue;
    const agent = fields.string("agent", { required: true, nonEmpty: true });
    const model = fields.string("model", { required: true, nonEmpty: true });
    const estimateUsd = fields.number("estimate_usd", { min: 0 });
    const maxCallUsd = fields.number("max_call_usd", { min: 0 });
    if (agent !== undefined && !(agent in agents)) {
      const known = Object.keys(agents);
      fields.report("agent", `unknown agent "${agent}"${didYouMean(agent, known)}; [agents] has ${known.length ? known.join(", ") : "none"}`);
    }
    fields.rejectUnknown();
    if (agent !== undefined && model !== undefined) tiers.push({ name, agent, model, estimateUsd, maxCallUsd });
  }
  return tiers;
}

function readLimits(root: Fields): Limits {
  const fields = root.subtable("limits");
  if (!fields) return { ...DEFAULT_LIMITS };
  const duration = (key: string, fallback: number): number => {
    const value = fields.raw(key);
    if (value === undefined) return fallback;
    const ms = parseDuration(value);
    if (ms === undefined) fields.report(key, durationHelp(value));
    return ms ?? fallback;
  };
  const size = (key: string, fallback: number): number => {
    const value = fields.raw(key);
    if (value === undefined) return fallback;
    const bytes = parseSize(value);
    if (bytes === undefined) fields.report(key, `${JSON.stringify(value)} is not a size; write e.g. "1MB", "512KB" or a number of bytes`);
    return bytes ?? fallback;
  };
  const limits: Limits = {
    agentTimeoutMs: duration("agent_timeout", DEFAULT_LIMITS.agentTimeoutMs),
    agentIdleTimeoutMs: duration("agent_idle_timeout", DEFAULT_LIMITS.agentIdleTimeoutMs),
    gateTimeoutMs: duration("gate_timeout", DEFAULT_LIMITS.gateTimeoutMs),
    installTimeoutMs: duration("install_timeout", DEFAULT_LIMITS.installTimeoutMs),
    rateLimitWaitMs: duration("rate_limit_wait", DEFAULT_LIMITS.rateLimitWaitMs),
    rateLimitMaxWaits: fields.number("rate_limit_max_waits", { min: 1, max: 1000, integer: true }) ?? DEFAULT_LIMITS.rateLimitMaxWaits,
    maxCostUsd: fields.number("max_cost_usd", { min: 0 }),
    maxCostWindowMs: fields.raw("max_cost_window") === undefined ? undefined : duration("max_cost_window", 0) || undefined,
    maxAttempts: fields.number("max_attempts", { min: MIN_ATTEMPTS, max: MAX_ATTEMPTS, integer: true }) ?? DEFAULT_LIMITS.maxAttempts,
    concurrency: fields.number("concurrency", { min: 1, max: 32, integer: true }) ?? DEFAULT_LIMITS.concurrency,
    maxResultSizeBytes: size("max_result_size", DEFAULT_LIMITS.maxResultSizeBytes),
    maxFileSizeBytes: size("max_file_size", DEFAULT_LIMITS.maxFileSizeBytes),
    maxAttemptSizeBytes: size("max_attempt_size", DEFAULT_LIMITS.maxAttemptSizeBytes),
    onBlock: onBlock(fields),
    retryFrom: retryFrom(fields),
    maxQuestions: fields.number("max_questions", { min: 0, max: 10, integer: true }) ?? DEFAULT_LIMITS.maxQuestions,
  };
  fields.rejectUnknown();
  return limits;
}

function readSandbox(root: Fields): SandboxConfig {
  const fields = root.subtable("sandbox");
  if (!fields) return { ...DEFAULT_SANDBOX };
  const kindText = fields.string("kind");
  const kind = kindText === undefined ? DEFAULT_SANDBOX.kind : SANDBOX_KINDS.find((candidate) => candidate === kindText);
  if (!kind) fields.report("kind", `unknown sandbox kind "${kindText}"; use "bwrap" (the default) or "none" (no containment)`);
  const home = fields.stringArray("home") ?? [];
  for (const path of home) {
    if (path.startsWith("/") || path.split("/").includes("..") || path.trim() === "") fields.report("home", `"${path}" must be a path inside HOME, relative to it (e.g. ".rustup")`);
  }
  fields.rejectUnknown();
  return { kind: kind ?? DEFAULT_SANDBOX.kind, home };
}

function readPlanning(root: Fields, tiers: readonly Tier[]): Planning {
  const fields = root.subtable("planning");
  if (!fields) return { ...DEFAULT_PLANNING };
  const tier = fields.string("tier", { nonEmpty: true });
  if (tier !== undefined && tiers.length > 0 && !tiers.some((candidate) => candidate.name === tier)) {
    fields.report("tier", `unknown tier "${tier}"; use one of ${tiers.map((candidate) => `"${candidate.name}"`).join(", ")}`);
  }
  const policyText = fields.string("require_assessment");
  const requireAssessment = policyText === undefined ? DEFAULT_PLANNING.requireAssessment : ASSESSMENT_POLICIES.find((candidate) => candidate === policyText);
  if (!requireAssessment) {
    fields.report(
      "require_assessment",
      `"${policyText}" is not a choice; use "none" (the default), "advanced" (packets of the "advanced" tier or stronger) or "all" (every packet needs a \`ready\` ruling from \`factory assess\`)`,
    );
  }
  const maxCostUsd = fields.number("max_cost_usd", { min: 0 });
  const mutants = fields.number("mutants", { min: 0, max: 500, integer: true }) ?? DEFAULT_PLANNING.mutants;
  const mutantsShare = fields.number("mutants_share", { min: 0, max: 100 }) ?? DEFAULT_PLANNING.mutantsShare;
  fields.rejectUnknown();
  return { tier, requireAssessment: requireAssessment ?? DEFAULT_PLANNING.requireAssessment, maxCostUsd, mutants, mutantsShare };
}

function onBlock(fields: Fields): Limits["onBlock"] {
  const value = fields.string("on_block");
  if (value === undefined) return DEFAULT_LIMITS.onBlock;
  if (value === "halt" || value === "continue") return value;
  fields.report("on_block", `"${value}" is not a choice; use "halt" (stop the run at the first blocked packet, the default) or "continue" (hold only its dependents)`);
  return DEFAULT_LIMITS.onBlock;
}

function retryFrom(fields: Fields): Limits["retryFrom"] {
  const value = fields.string("retry_from");
  if (value === undefined) return DEFAULT_LIMITS.retryFrom;
  if (value === "last" || value === "tip") return value;
  fields.report("retry_from", `"${value}" is not a choice; use "last" (a retry continues from the last attempt's work, the default) or "tip" (every attempt starts over)`);
  return DEFAULT_LIMITS.retryFrom;
}

function durationHelp(value: unknown): string {
  return `${JSON.stringify(value)} is not a duration; write e.g. "90s", "15m", "1h"`;
}

/** How long a notification may take, all its retries included, before it is given up (and reported). */
export const DEFAULT_NOTIFY_TIMEOUT_MS = 10_000;

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
