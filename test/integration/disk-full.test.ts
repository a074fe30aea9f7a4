import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * A disk that fills up during the night: the worktrees' filesystem is a 1 MB tmpfs, mounted in a mount
 * namespace of the factory's own (unshare), and the implementer writes more than fits. The machine's
 * fault, not the work's: no attempt spent, the run stops naming it, and the next run goes on.
 */
const setUp = useLoopRepos(afterEach);
const cache = mkdtempSync(join(tmpdir(), "factory-test-full-"));
afterEach(() => rmSync(join(cache, "factory"), { recursive: true, force: true }));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

function canMountTmpfs(): boolean {
  const probe = spawnSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs '${cache}'`], { encoding: "utf8" });
  if (probe.status !== 0) console.warn(`skipping the disk-full tests: cannot mount a small tmpfs in a mount namespace here (${(probe.stderr || probe.error?.message || "").trim()})`);
  return probe.status === 0;
}

function factory(dir: string, args: string[], full: boolean): { code: number | null; out: string } {
  const env = { ...process.env, NO_COLOR: "1", XDG_CACHE_HOME: cache };
  const command = `exec '${process.execPath}' '${FACTORY_BIN}' ${args.join(" ")}`;
  const result = full
    ? spawnSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs '${cache}' && ${command}`], { cwd: dir, env, encoding: "utf8", timeout: 120_000 })
    : spawnSync("sh", ["-c", command], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

describe.skipIf(!canMountTmpfs())("a full disk", () => {
  it("under the worktrees is the machine's fault: no attempt spent, the run stops naming the filesystem, the next run goes on", async () => {
    const fill = { run: "head -c 3000000 /dev/zero > filler.bin", write: { "src/double.js": DOUBLE_JS } };
    const target = setUp({ script: { P01: { implementer: [fill, { write: { "src/double.js": DOUBLE_JS } }] } } });
    const full = factory(target.dir, ["run"], true);
    expect(full.out).toMatch(/the machine ran out: no space left: the filesystem holding \S+ has [\d.]+ ?\w*B? free/);
    expect(full.out).not.toContain("internal error");
    expect(full.code).toBe(1);
    const record = await target.record("P01");
    expect(record?.attemptsUsed).toBe(0);
    expect(record?.status.state).toBe("queued");

    const again = factory(target.dir, ["run"], false);
    expect(again.out).toContain("→ merged");
    expect(again.code).toBe(0);
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
  });
});
