/** The factory's configuration as the program uses it, every default filled. */
export interface Config {
  targetBranch: string;
  /** In file order; the first is the default surface of a packet. */
  surfaces: Surface[];
  agents: Record<string, Agent>;
  /** In file order, weakest first: a packet's reviewer defaults to one tier up. */
  tiers: Tier[];
  limits: Limits;
  /** `batch`: at most this many gated attempts waiting to land are gated together on their combination (1: one at a time). */
  merge: { message: string; batch: number };
  notify: {
    command: string | undefined;
    /** An http(s) URL that receives a JSON body per notification (see loop/notify.ts). */
    webhook: string | undefined;
    /** The most one notification may take, retries included; it never holds the run. */
    timeoutMs: number;
    /** A desktop notification too, where `notify-send` and a session bus exist. */
    desktop: boolean;
  };
  sandbox: SandboxConfig;
  /** How long `factory gc` (and the end of a run) keeps run directories, logs and caches. */
  retention: { runsMs: number };
  planning: Planning;
  /** `[ledger]`: where the ledger lives: the file under `.factory/state/` (undefined), or a PostgreSQL URL shared by several machines. */
  ledger: { url: string | undefined };
  /**
   * `[tests]`: a test that passed at the baseline and fails in the candidate is run this many more times,
   * alone, in the candidate and on the untouched tip, to tell a flaky test from a regression (gates/flaky.ts);
   * planted files run on their own this many times. 0: never rerun.
   */
  tests: { reruns: number };
  /** `[workers]`: how long a worker's claim lasts without a renewal (PostgreSQL ledger only; renewed every third of it). */
  workers: { leaseMs: number };
  /** `[target]`: where landings go: this repository's `target_branch` (no remote), or that branch of a shared git remote, by push or by pull request. */
  /** `patienceMs`: how long an unreachable remote is waited out (with backoff, nothing spent) before the work waits for the next run. */
  target: { remote: string | undefined; mode: TargetMode; patienceMs: number };
  /** `[forge]`: where pull requests are opened (`mode = "pull-request"`). */
  forge: ForgeConfig | undefined;
}

/** `[tests] reruns` unless the config says otherwise. */
export const DEFAULT_RERUNS = 2;

export const TARGET_MODES = ["push", "pull-request"] as const;
export type TargetMode = (typeof TARGET_MODES)[number];

/** A check the forge must report passed on a PR's head: its name (a check run's, a status's context) and, where it is pinned, the app that must report it. */
export interface RequiredCheck {
  context: string;
  /** GitHub's id of the app (branch protection's `app_id`, a ruleset's `integration_id`). */
  appId?: number;
  /** The app's slug (as the config names it: "github-actions"). */
  app?: string;
}

export interface ForgeConfig {
  kind: "github";
  /** The REST API's base: https://api.github.com, or GitHub Enterprise's own. */
  api: string;
  /** "owner/name". */
  repo: string;
  /** The environment variable that holds the token (never the config). */
  tokenEnv: string;
  /** Merge a pull request once the forge's required checks pass on its current head (squash, guarded by that head). */
  autoMerge: boolean;
  /**
   * `required_checks`: the checks that must pass on a PR's head before an
   * auto-merge (each optionally pinned to the app that reports it); [] says the
   * repository has no CI; unset, they are read from the branch's protection and rulesets.
   */
  requiredChecks: RequiredCheck[] | undefined;
  /** How often a run looks at its open pull requests while it has nothing else to do. */
  pollMs: number;
  /** An issue taken in with `factory intake` and labelled so is closed when its packet lands. */
  closeLabel: string;
}

export const DEFAULT_REMOTE_PATIENCE_MS = 10 * 60_000;
export const DEFAULT_FORGE_API = "https://api.github.com";
export const DEFAULT_FORGE_POLL_MS = 30_000;
export const DEFAULT_CLOSE_LABEL = "factory:close";

export const DEFAULT_LEASE_MS = 120_000;

export const ASSESSMENT_POLICIES = ["none", "advanced", "all"] as const;
export type AssessmentPolicy = (typeof ASSESSMENT_POLICIES)[number];

/** `[planning]`: the agents that judge packets before money is spent on them (`factory assess`). */
export interface Planning {
  /** The tier whose agent assesses; undefined: the tier named "advanced", else the strongest. */
  tier: string | undefined;
  /**
   * Which packets `run` and `lint` refuse without a `ready` ruling on their current version: none, every
   * packet whose tier is at or above "advanced" (the tier of that name, else the strongest), or all.
   */
  requireAssessment: AssessmentPolicy;
  /** The most one planning command may spend on its agent calls; undefined: no limit of its own. */
  maxCostUsd: number | undefined;
  /** How many mutants of a landed packet's changed lines its planted and hidden tests are run against (0: none). */
  mutants: number;
  /**
   * The mutation check's share of the night: it runs for at most this fraction of the time the run took
   * before it (0.5: a run takes at most 1.5 times as long as without it); 0: no bound. Each landed packet
   * gets at least one mutant.
   */
  mutantsShare: number;
}

export const DEFAULT_PLANNING: Planning = { tier: undefined, requireAssessment: "none", maxCostUsd: undefined, mutants: 20, mutantsShare: 0.4 };

export const DEFAULT_RETENTION = { runsMs: 14 * 86_400_000 };

export const SANDBOX_KINDS = ["bwrap", "none"] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

/** DESIGN §12: where agents and gates run. */
export interface SandboxConfig {
  kind: SandboxKind;
  /** Paths under HOME (relative to it) that stay readable inside the sandbox, beyond the toolchains on PATH. */
  home: string[];
}

export const DEFAULT_SANDBOX: SandboxConfig = { kind: "bwrap", home: [] };

export interface Surface {
  name: string;
  /** Relative to the repository root; "." for the root. */
  dir: string;
  install: string | undefined;
  gates: GateConfig[];
  /** Whether the surface's gates may reach the network (install always may). */
  network: boolean;
  /** Globs (relative to `dir`) of the test files, for a runner whose report names no file: what a test is, beside what the runner reports. */
  tests?: string[];
}

export interface GateConfig {
  name: string;
  run: string;
  /** Glob (relative to the surface dir) selecting `{files}`; undefined: all changed files of the surface. */
  files: string | undefined;
  fix: string | undefined;
  /** Per-test results come from JUnit XML at `{junit}` and are compared with the baseline. */
  tests: boolean;
  timeoutMs: number | undefined;
}

export const AGENT_KINDS = ["claude", "codex", "gemini", "command"] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export interface Agent {
  name: string;
  kind: AgentKind;
  /** The executable for the CLI kinds. */
  bin: string | undefined;
  /** The shell command for the `command` kind. */
  run: string | undefined;
  /** Extra variables passed through the scrubbed environment. */
  env: Record<string, string>;
  maxTurns: number | undefined;
  /** Extra command-line arguments for the CLI kinds (e.g. codex `-c` overrides). */
  args: string[];
  /** USD per million tokens, by model: cost is computed from tokens where the CLI reports none. */
  prices: Record<string, { input: number; output: number; cachedInput: number | undefined }>;
}

export interface Tier {
  name: string;
  agent: string;
  model: string;
  /** What a call whose cost is unknown counts against the cost cap (USD); see UNKNOWN_COST_ESTIMATE_USD. */
  estimateUsd: number | undefined;
  /** The most one call on this tier can plausibly cost (USD): a reported cost above it is suspect; see callCeilingUsd. */
  maxCallUsd: number | undefined;
}

/** What a call of unknown cost counts when its tier sets no `estimate_usd`: never $0. */
export const UNKNOWN_COST_ESTIMATE_USD = 1;

/** A tier's ceiling on one call when it sets no `max_call_usd`: this many times its estimate, and never under $25. */
export const CALL_CEILING_FACTOR = 25;

/** Pure: the most one call on `tier` can plausibly cost; a reported cost above it is suspect and charged the estimate. */
export function callCeilingUsd(tier: Pick<Tier, "estimateUsd" | "maxCallUsd">): number {
  return tier.maxCallUsd ?? Math.max(CALL_CEILING_FACTOR * (tier.estimateUsd ?? UNKNOWN_COST_ESTIMATE_USD), 25);
}

export interface Limits {
  agentTimeoutMs: number;
  agentIdleTimeoutMs: number;
  gateTimeoutMs: number;
  installTimeoutMs: number;
  maxCostUsd: number | undefined;
  /** `max_cost_window`: the cap covers every worker's spend in the last this-long (ms); unset, a run's own (12h on a shared ledger). */
  maxCostWindowMs: number | undefined;
  maxAttempts: number;
  concurrency: number;
  /** The longest a rate limit is waited out before the run halts instead. */
  rateLimitWaitMs: number;
  /** How many rate limits in a row an agent may report before the run halts instead of waiting again. */
  rateLimitMaxWaits: number;
  /** Result and review files larger than this are not read. */
  maxResultSizeBytes: number;
  /** A file larger than this in an attempt's change fails the scope gate. */
  maxFileSizeBytes: number;
  /** The changed files of one attempt, together, larger than this are not committed (the repository's object store keeps what is). */
  maxAttemptSizeBytes: number;
  /** What a blocked packet does to the run: halt it, or hold only its dependents and go on. */
  onBlock: "halt" | "continue";
  /** Where a retry starts: from the last attempt's gated work (when its guards passed and it still applies), or from the tip. */
  retryFrom: "last" | "tip";
  /** How many questions the implementer may ask a person about one version of a packet; past that a question is a failed attempt. */
  maxQuestions: number;
}

export const DEFAULT_LIMITS: Limits = {
  agentTimeoutMs: 60 * 60_000,
  agentIdleTimeoutMs: 10 * 60_000,
  gateTimeoutMs: 15 * 60_000,
  installTimeoutMs: 15 * 60_000,
  maxCostUsd: undefined,
  maxCostWindowMs: undefined,
  maxAttempts: 3,
  concurrency: 1,
  rateLimitWaitMs: 30 * 60_000,
  rateLimitMaxWaits: 8,
  maxResultSizeBytes: 1024 ** 2,
  maxFileSizeBytes: 10 * 1024 ** 2,
  maxAttemptSizeBytes: 50 * 1024 ** 2,
  onBlock: "halt",
  retryFrom: "last",
  maxQuestions: 2,
};

export const DEFAULT_MERGE_MESSAGE = "feat: {goal} [{id}]";
/** How many gated attempts waiting to land are gated together at most (issue 24). */
export const DEFAULT_MERGE_BATCH = 4;
export const CONFIG_PATH = ".factory/config.toml";
