import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FACTORY_BIN } from "../helpers/cli.js";
import { makeLoopRepo } from "../helpers/loop-repo.js";

/**
 * Issue 57 §5: where the cache is under a dot-directory, the worktrees go to /var/tmp/factory-<uid>; when that
 * is another user's (or a link, or open to others) they fall back to the dot-directory path, and doctor and run say
 * so. Run as another user (an unused id), which only root can start, so that its /var/tmp directory can be made
 * someone else's without touching this user's.
 */
// A user id of its own per test process (none of /etc/passwd's: only the id matters to the kernel and to the
// factory), so two copies of the suite at once never share its /var/tmp directory.
const NOBODY = 60_000 + (process.pid % 5_000);
/** Why factory cannot be started as that user here, if it cannot: not root, or this Node or checkout is not readable by others. */
function cannotRunAsNobody(): string | undefined {
  if (process.getuid?.() !== 0) return "it starts factory as another user, which needs root";
  const tried = spawnSync(process.execPath, ["-e", `require("node:fs").accessSync(${JSON.stringify(FACTORY_BIN)})`], { uid: NOBODY, gid: NOBODY, cwd: "/", encoding: "utf8" });
  if (tried.error || tried.status !== 0) return `user ${NOBODY} cannot run ${process.execPath} on ${FACTORY_BIN} (${tried.error?.message ?? tried.stderr.trim().split("\n").at(-1)})`;
  return undefined;
}
const unable = cannotRunAsNobody();
if (unable) console.warn(`skipping the worktree place test: ${unable}`);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function doctorAsNobody(): string {
  const repo = makeLoopRepo({ script: {} });
  cleanups.push(() => repo.cleanup());
  const home = mkdtempSync(join(tmpdir(), "factory-nobody-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, ".cache"));
  for (const path of [home, join(home, ".cache")]) chownSync(path, NOBODY, NOBODY);
  spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, repo.dir]);
  const env = { PATH: process.env.PATH ?? "", HOME: home, XDG_CACHE_HOME: join(home, ".cache"), NO_COLOR: "1" };
  const doctor = spawnSync(process.execPath, [FACTORY_BIN, "doctor", "--no-guards", "--no-models"], { cwd: repo.dir, env, uid: NOBODY, gid: NOBODY, encoding: "utf8", timeout: 120_000 });
  return `${doctor.stdout}${doctor.stderr}`;
}

describe.skipIf(unable !== undefined)("the worktrees' place", () => {
  const shared = `/var/tmp/factory-${NOBODY}`;

  it("taken by another user: doctor says the worktrees fall back under the dot-directory, and what to do", () => {
    if (existsSync(shared)) rmSync(shared, { recursive: true, force: true });
    mkdirSync(shared, { mode: 0o700 }); // root's, not that user's
    cleanups.push(() => rmSync(shared, { recursive: true, force: true }));
    const said = doctorAsNobody();
    expect(said).toContain(`warning: ${shared} is not this user's own directory (another user's, a link, or writable by others), so the worktrees go under `);
    expect(said).toContain(`remove ${shared}, or set XDG_CACHE_HOME to a path without a dot-directory`);
  });

  it("honest twin: this user's own: nothing is said", () => {
    if (existsSync(shared)) rmSync(shared, { recursive: true, force: true });
    cleanups.push(() => rmSync(shared, { recursive: true, force: true }));
    const said = doctorAsNobody();
    expect(said).toContain("ok    the ledger");
    expect(said).not.toContain("is not this user's own directory");
  });
});
