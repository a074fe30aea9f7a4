import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ForgeError, forgeOf } from "../forge/github.js";
import { INTAKE_DIR, intakeMarkdown, parseIssueRef, slugOf } from "../forge/intake.js";
import type { Output } from "../log/output.js";
import { terminalInert } from "../util/inert-text.js";
import { formatProblem } from "../util/problem.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { loadWorkspace } from "./workspace.js";

export interface IntakeOptions {
  cwd: string;
  issue: string;
  output: Output;
  env: NodeJS.ProcessEnv;
}

/**
 * `factory intake ISSUE`: reads an issue and its comments through the forge's API and writes the spec slice a
 * packet can pin to, `docs/intake/<number>-<slug>.md`, untracked, for a person to read and commit; then
 * `factory cut --spec` works from it as from any spec. When a packet cut from it lands, the factory comments
 * on the issue (and closes it when it carries `[forge] close_label`).
 */
export async function intake(options: IntakeOptions): Promise<ExitCode> {
  const { output } = options;
  const fail = (message: string, code: ExitCode = EXIT.invalid): ExitCode => {
    output.err(`factory intake: ${message}; nothing was written.`);
    return code;
  };
  const load = await loadWorkspace(options.cwd, { trustCache: false });
  const config = load.ok ? load.workspace.config : undefined;
  if (!load.ok || !config) {
    for (const problem of load.ok ? load.workspace.problems : load.problems) output.err(formatProblem(problem));
    return fail(".factory/config.toml does not load (`factory lint` lists its problems)");
  }
  const forge = config.forge;
  if (!forge) return fail('.factory/config.toml has no [forge] table: kind = "github", repo = "owner/name" (and token_env, the variable holding a token)');
  const ref = parseIssueRef(options.issue, forge.repo);
  if (!ref.ok) return fail(ref.problem);
  const root = load.workspace.root;
  const dir = join(root, INTAKE_DIR);
  const taken = safeList(dir).find((name) => name.startsWith(`${ref.number}-`) && name.endsWith(".md"));
  if (taken) return fail(`issue #${ref.number} is taken in already: ${INTAKE_DIR}/${taken} (remove it first to take the issue in again)`);
  const client = forgeOf(forge, options.env);
  let markdown: string;
  let path: string;
  try {
    const issue = await client.issue(ref.number);
    if (issue.pull_request) return fail(`#${ref.number} on ${forge.repo} is a pull request, not an issue`);
    const comments = await client.issueComments(ref.number);
    markdown = intakeMarkdown(issue, comments, new Date().toISOString());
    path = `${INTAKE_DIR}/${ref.number}-${slugOf(issue.title)}.md`;
  } catch (error) {
    if (error instanceof ForgeError) return fail(error.message, error.status === 404 ? EXIT.invalid : EXIT.halted);
    throw error;
  }
  mkdirSync(dir, { recursive: true });
  // The issue's words are data: a control byte in its title or body is written as a visible escape, never acted on.
  writeFileSync(join(root, path), terminalInert(markdown), { flag: "wx" });
  output.out(`Wrote ${path} (issue #${ref.number}, untracked). Read it, then:`);
  output.out(`  git add ${path} && git commit -m "intake: issue #${ref.number}"`);
  output.out(`  factory cut --spec ${path} --scope "…"`);
  output.out(`When a packet cut from it lands, the factory comments on the issue${forge.closeLabel ? ` and closes it if it is labelled ${forge.closeLabel}` : ""}.`);
  return EXIT.ok;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
