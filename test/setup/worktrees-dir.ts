import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The factory keeps worktrees in the user's cache directory, outside the repository: the suite's go to a
 * cache directory of its own, removed at the end, never the machine's ~/.cache.
 */
export default function setup(): () => void {
  // Published packages the tests download are kept in the machine's cache across runs (test/helpers/published.ts).
  process.env.FACTORY_TEST_CACHE ??= join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "factory-tests");
  const cache = mkdtempSync(join(tmpdir(), "factory-test-cache-"));
  process.env.XDG_CACHE_HOME = cache;
  return () => rmSync(cache, { recursive: true, force: true });
}
