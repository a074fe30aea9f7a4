import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN } from "../helpers/cli.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, useLoopRepos } from "../helpers/loop-repo.js";

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

/** `factory ARGS` in `dir`; with `full`, its cache (where the worktrees are) on a 1 MB tmpfs, first filled with `prefill` bytes from outside. */
function factory(dir: string, args: string[], full: boolean, prefill = 0): { code: number | null; out: string } {
  const env = { ...process.env, NO_COLOR: "1", XDG_CACHE_HOME: cache };
  const command = `exec '${process.execPath}' '${FACTORY_BIN}' ${args.join(" ")}`;
  const fill = prefill > 0 ? ` && head -c ${prefill} /dev/zero > '${cache}/someone-else.bin'` : "";
  const result = full
    ? spawnSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs '${cache}'${fill} && ${command}`], { cwd: dir, env, encoding: "utf8", timeout: 120_000 })
    : spawnSync("sh", ["-c", command], { cwd: dir, env, encoding: "utf8", timeout: 120_000 });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

/** Bytes of someone else's file on the 1 MB tmpfs that leave room for a worktree and a baseline, not for an agent's writes. */
const PREFILL = 1_000_000;

const TRIPLE = "export function triple(n) {\n  return n * 3;\n}\n";

describe.skipIf(!canMountTmpfs())("a full disk", () => {
  it("filled by an implementer from inside its own worktree is the attempt's fault (removing its worktree gives the room back): spent and blocked, and the rest of the queue goes on", async () => {
    const fill = { run: "mkdir -p .tox && head -c 3000000 /dev/zero > .tox/filler.bin", write: { "src/double.js": DOUBLE_JS } };
    const target = setUp({ script: { P01: { implementer: [fill] }, P02: { implementer: [{ write: { "src/triple.js": TRIPLE } }] } } });
    target.write("packets/P02-triple.toml", target.read("packets/P01-double.toml").replace('id = "P01"', 'id = "P02"').replaceAll("double", "triple").replace("n * 2", "n * 3"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 2, 6));
    target.commit("a second packet");
    const full = factory(target.dir, ["run", "--keep-going"], true);
    expect(full.out).toMatch(/P01#1 → blocked: the attempt filled the disk from inside its worktree: the filesystem had [\d.]+ ?\w*B free when its implementer started/);
    expect(full.out).not.toContain("the machine ran out");
    expect(full.out).toContain("P02#1 → merged");
    const record = await target.record("P01");
    expect(record?.attemptsUsed).toBe(1);
    expect(record?.status.state).toBe("blocked");
    expect((await target.record("P02"))?.status.state).toBe("merged");
    // The next run is not stopped by it again: P01 waits for a person, nothing else is left.
    const again = factory(target.dir, ["run"], true);
    expect(again.out).not.toContain("the machine ran out");
  });

  it("filled by something else is the machine's fault: no attempt spent, the run stops naming the filesystem, the next run goes on", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    // Someone else's file leaves less room than the factory needs, before any attempt.
    const full = factory(target.dir, ["run"], true, 1_020_000);
    expect(full.out).toMatch(/(the machine ran out: |stopped: )no space left/);
    expect(full.out).not.toContain("internal error");
    expect(full.code).toBe(1);
    const record = await target.record("P01");
    expect(record?.attemptsUsed ?? 0).toBe(0);
    expect(record?.status.state ?? "queued").toBe("queued");

    const again = factory(target.dir, ["run"], false);
    expect(again.out).toContain("→ merged");
    expect(again.code).toBe(0);
    expect((await target.record("P01"))?.attemptsUsed).toBe(1);
  });

  it("already too full when an agent is to be called stops the run before the call is made: nothing paid, nothing spent", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    // Room for the worktree and the baseline, less than the factory needs to let an agent write.
    const full = factory(target.dir, ["run"], true, PREFILL);
    expect(full.out).toMatch(/the machine ran out: no space left on the device \(no space left before the implementer call: the filesystem holding \S+ has [\d.]+ KB free/);
    expect(full.code).toBe(1);
    const events = await target.events("P01");
    expect(events.filter((event) => event.kind === "agent-finished")).toEqual([]);
    expect((await target.record("P01"))?.attemptsUsed ?? 0).toBe(0);
  });

  it("a full filesystem under .git/objects is named, with git's own line about it, not git's command line (issue 57 §5)", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const objects = join(target.dir, ".git", "objects");
    const saved = mkdtempSync(join(tmpdir(), "factory-test-objects-"));
    try {
      // The repository's object store on its own 1 MB tmpfs, its objects copied in, then filled by someone else's file.
      const mount = `cp -a '${objects}/.' '${saved}/' && mount -t tmpfs -o size=1m tmpfs '${objects}' && cp -a '${saved}/.' '${objects}/' && (head -c 2000000 /dev/zero > '${objects}/someone-else.bin' || true)`;
      const command = `exec '${process.execPath}' '${FACTORY_BIN}' run`;
      const env = { ...process.env, NO_COLOR: "1", XDG_CACHE_HOME: cache };
      const result = spawnSync("unshare", ["-rm", "sh", "-c", `${mount} && ${command}`], { cwd: target.dir, env, encoding: "utf8", timeout: 120_000 });
      const out = `${result.stdout}${result.stderr}`;
      expect(out).toContain(`the machine ran out: no space left on the device: the filesystem holding ${objects} has `);
      expect(out).toContain("(fatal: unable to write loose object file: No space left on device)");
      expect(out).not.toContain("git commit --quiet"); // the command line (its message, its pathspec) is not what a person acts on
      expect(out).not.toContain("internal error");
      expect(result.status).toBe(1);
    } finally {
      rmSync(saved, { recursive: true, force: true });
    }
  });
});
