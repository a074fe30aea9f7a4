import type { AgentKind } from "./types.js";

/** Where `factory init --ci github` writes its workflow. */
export const WORKFLOW_PATH = ".github/workflows/factory.yml";

/** Each agent CLI's npm package and the secret it reads its key from. */
const AGENT_CLIS: Partial<Record<AgentKind, { pkg: string; key: string }>> = {
  claude: { pkg: "@anthropic-ai/claude-code", key: "ANTHROPIC_API_KEY" },
  codex: { pkg: "@openai/codex", key: "OPENAI_API_KEY" },
  gemini: { pkg: "@google/gemini-cli", key: "GEMINI_API_KEY" },
};

export interface WorkflowInput {
  /** How many workers run at once: one job each, all on the one PostgreSQL ledger. */
  workers: number;
  /** The agent kinds the config uses (command agents bring their own program). */
  agents: readonly AgentKind[];
  targetBranch: string;
  /**
   * `[target] mode = "pull-request"`: the workers open pull requests through the forge's API with the token in
   * this environment variable (`[forge] token_env`).
   */
  pullRequests?: { tokenEnv: string };
}

/**
 * Pure: the secret a token variable is set from. GitHub refuses secret names that start with GITHUB_, and the
 * job's own GITHUB_TOKEN will not do: a pull request it opens starts no workflow, so the required checks the
 * factory waits for before it merges would never run.
 */
export function tokenSecret(tokenEnv: string): string {
  return tokenEnv.startsWith("GITHUB_") ? `FACTORY_${tokenEnv}` : tokenEnv;
}

/**
 * Pure: a scheduled GitHub Actions workflow that runs a night of workers:
 * a matrix of jobs, each one `factory run --worker`, sharing the PostgreSQL
 * ledger named by a secret; one night at a time (a concurrency group); the
 * jobs retry nothing (the ledger's leases hand a dead worker's packet on).
 */
export function renderWorkflow(input: WorkflowInput): string {
  const clis = [...new Set(input.agents)].flatMap((kind) => {
    const cli = AGENT_CLIS[kind];
    return cli ? [cli] : [];
  });
  const workers = Array.from({ length: input.workers }, (_, at) => at + 1);
  const pr = input.pullRequests;
  const keys = [
    ...clis.map((cli) => `      ${cli.key}: \${{ secrets.${cli.key} }}`),
    ...(pr ? [`      ${pr.tokenEnv}: \${{ secrets.${tokenSecret(pr.tokenEnv)} }} # opens and merges the pull requests`] : []),
  ];
  return `# Written by \`factory init --ci github\`: a night of factory workers on GitHub Actions.
# Each job is one worker; all of them drain one queue through the PostgreSQL ledger
# (docs/guides/several-machines.md). Before the first night:
#   - repository secret FACTORY_LEDGER_URL: postgres://user:password@host:5432/db, reachable from the runners
${clis.map((cli) => `#   - repository secret ${cli.key}: the key ${cli.pkg} uses`).join("\n")}${clis.length ? "\n" : ""}${
  pr
    ? `#   - repository secret ${tokenSecret(pr.tokenEnv)}: a token (a fine-grained personal token or a GitHub App's) that may push branches,
#     open and merge pull requests and read checks; not the job's own GITHUB_TOKEN: a pull request it opens starts
#     no workflow, so the required checks the factory waits for would never run
`
    : ""
}#   - repository variable FACTORY_PACKAGE: what \`npm install -g\` installs factory from (a git URL or a tarball)
#   - [target] remote = "origin" in .factory/config.toml, committed and pushed with the packets
name: factory

on:
  schedule:
    - cron: "0 22 * * 1-5" # 22:00 UTC on weekdays: set your night
  workflow_dispatch: {}

# One night at a time: a night still running when the next is due finishes first.
concurrency:
  group: factory-night
  cancel-in-progress: false

permissions:
${
  pr
    ? `  contents: write # the workers push the packets' branches
  pull-requests: write # and open their pull requests (the token in ${pr.tokenEnv} merges them once the checks pass)
  checks: read
  statuses: read
`
    : `  contents: write # the workers push their landings to ${input.targetBranch}
`
}
jobs:
  worker:
    runs-on: ubuntu-24.04
    timeout-minutes: 350
    strategy:
      fail-fast: false # one worker stopping leaves the others running
      matrix:
        worker: [${workers.join(", ")}]
    env:
      FACTORY_LEDGER_URL: \${{ secrets.FACTORY_LEDGER_URL }}
${keys.length ? `${keys.join("\n")}\n` : ""}    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${input.targetBranch}
          fetch-depth: 0 # the landed packets are read from the history's trailers
      - uses: actions/setup-node@v4
        with:
          node-version: 24
      - name: The sandbox (bubblewrap) and the trace of what tests read (strace)
        run: |
          sudo apt-get update -q
          sudo apt-get install -y -q bubblewrap strace
          # Ubuntu 24.04 refuses unprivileged user namespaces to programs without an AppArmor profile; bubblewrap needs them.
          sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0
      - name: factory${clis.length ? " and the agent CLIs" : ""}
        env:
          FACTORY_PACKAGE: \${{ vars.FACTORY_PACKAGE }}
        run: |
          if [ -z "$FACTORY_PACKAGE" ]; then echo "::error::set the repository variable FACTORY_PACKAGE (what npm install -g installs factory from)"; exit 2; fi
          npm install -g "$FACTORY_PACKAGE"${clis.map((cli) => ` ${cli.pkg}`).join("")}
      - name: Work the queue
        run: factory run --worker "gh-\${{ github.run_id }}-\${{ matrix.worker }}"
      - name: Status
        if: always()
        run: factory status
`;
}
