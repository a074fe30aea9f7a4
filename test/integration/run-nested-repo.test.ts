import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, gateResults, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * Nothing the agent wrote runs outside the sandbox through the factory's own git: a nested repository in
 * the worktree, whose own config declares a clean filter, and a file git must hash again (a future mtime).
 * The factory's git (unsandboxed) must never recurse into it, and the attempt is refused, naming the path.
 */
const setUp = useLoopRepos(afterEach);
const marker = join(tmpdir(), `factory-nested-marker-${process.pid}`);
afterEach(() => rmSync(marker, { force: true }));

const NESTED = [
  "mkdir -p lib/evil && cd lib/evil && git init -q",
  `git config filter.evil.clean "sh -c 'echo ran-as-the-user > ${marker}; cat'"`,
  "echo '* filter=evil' > .gitattributes && echo data > data.txt",
  "git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -qm nested",
  "touch -d '2099-01-01' data.txt",
].join(" && ");

describe("a nested repository in an attempt", () => {
  it("never has its filter run by the factory's git, and is refused by the scope gate, naming it", async () => {
    const target = setUp({ allowed: ["src/double.js", "lib/**"], script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: NESTED }] } } });
    const { code, out } = await target.run();
    expect(existsSync(marker)).toBe(false);
    expect(out).toMatch(/gate scope: fail — .*lib\/evil.*nested git repository/);
    expect(gateResults(await target.events("P01"), 1)).toMatchObject({ scope: "fail" });
    expect(out).not.toContain("P01#1 → merged");
    expect(code).toBe(1);
  });
});
