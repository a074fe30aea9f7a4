import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeRepo } from "../helpers/git-repo.js";
import { pytestAvailable, queueDoublePacket, usePythonQueue, writePythonProject } from "../helpers/python-queue.js";

/**
 * Where strace cannot trace inside the sandbox (ptrace refused: a hardened kernel, a container without the
 * capability), the gates run as they are: a traced run that never ran is run again untraced, never judged as
 * the work's failure. A strace that passes its own start-up check and then refuses every command stands in
 * for it. (Its own file: which strace the factory found is remembered per process.)
 */
const available = pytestAvailable("the refused-trace test");
const queue = usePythonQueue(afterEach);
let fake: string;
let path: string | undefined;

beforeAll(() => {
  fake = mkdtempSync(join(tmpdir(), "factory-fake-strace-"));
  writeFileSync(join(fake, "strace"), '#!/bin/sh\ncase "$*" in *"/dev/null true") exit 0;; esac\necho "strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted" >&2\nexit 1\n');
  chmodSync(join(fake, "strace"), 0o755);
  path = process.env.PATH;
  process.env.PATH = `${fake}:${path ?? ""}`;
});
afterAll(() => {
  process.env.PATH = path;
  rmSync(fake, { recursive: true, force: true });
});

describe.skipIf(!available)("a trace refused where the gates run", () => {
  it("runs the baseline and the gates untraced: honest work merges", async () => {
    const repo = queue.track(makeRepo({ initialCommit: false }));
    writePythonProject(repo, { config: `${queue.agentConfig}[limits]\nmax_attempts = 1\n` });
    queueDoublePacket(repo, repo.commit("python project"));
    const { code, out, record } = await queue.run(repo, { P01: { implementer: [{ write: { "pkg/double.py": "def double(n):\n    return n * 2\n" } }], reviewer: [{ evidence: "pkg/double.py:2" }] } });
    expect(record?.status.state, out).toBe("merged");
    expect(code).toBe(0);
  });
});
