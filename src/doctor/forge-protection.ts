import type { Config } from "../config/types.js";
import { ForgeError, forgeOf, type Protection } from "../forge/github.js";
import type { ProofLine } from "./probes.js";

/**
 * Pull-request mode: the forge's merge guard is on the PR's head, not on the
 * base, so "the target re-gated at landing" holds only where the forge makes
 * a PR be up to date with its base before it merges (branch protection's
 * strict status checks). Without it the line is NOT ARMED: a PR gated on an
 * older base can merge onto a newer one that nobody gated.
 */
export async function forgeProtectionLine(config: Config, signal?: AbortSignal): Promise<ProofLine | undefined> {
  if (config.target.mode !== "pull-request" || !config.forge) return undefined;
  const what = `${config.targetBranch} re-gated at landing (${config.forge.repo} on ${config.forge.api})`;
  let protection: Protection;
  try {
    protection = await forgeOf(config.forge, process.env, signal).protection(config.targetBranch);
  } catch (error) {
    if (!(error instanceof ForgeError)) throw error;
    return { what, unproven: `the branch protection could not be read: ${error.message}` };
  }
  return protectionLine(what, config.targetBranch, protection);
}

/**
 * Pure: the doctor line for a branch's protection (classic protection and
 * rulesets together). "Up to date before merging" takes effect only with a
 * required check (GitHub's own rule): with none it arms nothing.
 */
export function protectionLine(what: string, branch: string, protection: Protection): ProofLine {
  if (protection.kind === "none")
    return {
      what,
      notArmed: `${branch} is not protected (no branch protection, no ruleset requiring checks): a PR can merge onto a base its checks never ran on; require status checks with "Require branches to be up to date before merging" (or a merge queue)`,
    };
  const where = `${branch}'s ${protection.from.join(" and ")}`;
  if (!protection.strict)
    return {
      what,
      notArmed: `${where} does not require branches to be up to date before merging: a PR gated on an older base can merge onto a newer one; turn that on (or use a merge queue)`,
    };
  if (protection.contexts.length === 0)
    return {
      what,
      notArmed: `${where} requires branches to be up to date but no status check, and GitHub enforces "up to date" only with a required check: require the CI's check (and name it in [forge] required_checks)`,
    };
  return { what: `${what}: ${where} requires PRs up to date with ${branch} and checks ${protection.contexts.join(", ")}` };
}
