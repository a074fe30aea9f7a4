import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readFileAt, resolveCommit } from "../git/repo.js";
import type { Problem } from "../util/problem.js";
import { parseConfig } from "./parse.js";
import { CONFIG_PATH, type Config } from "./types.js";

export interface ConfigLoad {
  /** Undefined when the config has problems (they are in `problems`). */
  config: Config | undefined;
  problems: Problem[];
  warnings: string[];
  /** The target branch, and its tip when it has commits. */
  branch: string;
  tip: string | undefined;
}

/**
 * The config as committed at the tip of the target branch, never the working
 * copy: whatever edits `.factory/config.toml` in the checkout (an agent that
 * reached it, a half-done edit) cannot weaken the gates or choose the notify
 * command of the next run. The target branch is read from the config
 * committed at HEAD (the working copy while nothing is committed); then the
 * config is read again at that branch's tip. Uncommitted edits are named.
 */
export async function loadConfig(root: string): Promise<ConfigLoad> {
  const working = await readWorking(root);
  const bootstrap = (await readFileAt(root, "HEAD", CONFIG_PATH)) ?? working;
  const fallback = { config: undefined, warnings: [], branch: "main" };
  if (bootstrap === undefined) {
    return { ...fallback, problems: [{ file: CONFIG_PATH, message: "not found; run `factory init` to write one" }], tip: await resolveCommit(root, "main") };
  }
  const first = parseConfig(bootstrap, CONFIG_PATH);
  const branch = first.ok ? first.config.targetBranch : "main";
  const tip = await resolveCommit(root, branch);
  if (!tip) {
    return {
      ...fallback,
      branch,
      tip,
      problems: [noCommitsProblem(branch)],
    };
  }
  const committed = await readFileAt(root, tip, CONFIG_PATH);
  if (committed === undefined) {
    return {
      ...fallback,
      branch,
      tip,
      problems: [{ file: CONFIG_PATH, message: `is not committed on ${branch}; commit it: the factory reads its config from git at the tip of ${branch}, like the packets` }],
    };
  }
  const parsed = parseConfig(committed, CONFIG_PATH);
  const warnings = working !== undefined && working !== committed ? [`${CONFIG_PATH} has uncommitted edits; the version committed on ${branch} is used`] : [];
  return parsed.ok ? { config: parsed.config, problems: [], warnings, branch, tip } : { ...fallback, branch, tip, warnings, problems: [...parsed.problems] };
}

/** The target branch has nothing to read the config and the queue from. */
export function noCommitsProblem(branch: string): Problem {
  return { file: CONFIG_PATH, key: "target_branch", message: `the target branch "${branch}" has no commits in this repository; set target_branch or commit to it` };
}

async function readWorking(root: string): Promise<string | undefined> {
  try {
    return await readFile(join(root, CONFIG_PATH), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
