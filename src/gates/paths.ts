import picomatch from "picomatch";

/** Whether a repository path matches any of the globs (a literal path matches itself). */
export function matchesAny(path: string, globs: readonly string[]): boolean {
  if (globs.length === 0) return false;
  return picomatch(globs as string[], { dot: true })(path);
}

/** Paths no agent may change, whatever the packet says: the queue and the factory's config. */
export const ALWAYS_FORBIDDEN = ["packets/**", ".factory/**"];

/** Files the agents write for the factory; never committed, never gated. */
export const AGENT_OUTPUTS = [".factory/result.json", ".factory/review.json"];

export { shellQuote } from "../process/shell-words.js";
