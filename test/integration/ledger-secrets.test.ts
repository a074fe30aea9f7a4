import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentEnv } from "../../src/agents/env.js";
import { baseEnv, runCommand } from "../../src/process/run.js";

/** The ledger database's credentials never reach an agent or a gate: not in their environment, not as a file in the sandbox. */
const dirs: string[] = [];
const saved = { ...process.env };
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const key of ["FACTORY_LEDGER_URL", "PGPASSWORD", "PGPASSFILE", "PGUSER"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("the ledger database's credentials", () => {
  it("are scrubbed from an agent's and a gate's environment", () => {
    process.env.FACTORY_LEDGER_URL = "postgres://factory:s3cret-pass@db.internal/factory";
    process.env.PGPASSWORD = "s3cret-pass";
    process.env.PGUSER = "factory";
    const agent = agentEnv({ kind: "command", env: {} } as unknown as Parameters<typeof agentEnv>[0]);
    const gate = baseEnv();
    for (const env of [agent, gate]) {
      expect(Object.keys(env)).not.toContain("FACTORY_LEDGER_URL");
      expect(Object.keys(env)).not.toContain("PGPASSWORD");
      expect(JSON.stringify(env)).not.toContain("s3cret-pass");
    }
  });

  it("are unreadable inside the sandbox as a password file, wherever PGPASSFILE puts it; the file stays readable outside", async () => {
    const dir = mkdtempSync(join(tmpdir(), "factory-pgpass-"));
    dirs.push(dir);
    const worktree = join(dir, "wt");
    const repo = join(dir, "repo");
    mkdirSync(worktree);
    mkdirSync(repo);
    // Outside HOME and outside /tmp's emptied view: where the sandbox's read-only root would show it.
    const file = join(repo, "pgpass");
    writeFileSync(file, "db.internal:5432:factory:factory:s3cret-pass\n", { mode: 0o600 });
    process.env.PGPASSFILE = file;
    const outcome = await runCommand({
      command: `cat ${JSON.stringify(file)}; echo "[end]"`,
      cwd: worktree,
      env: baseEnv(),
      timeoutMs: 30_000,
      sandbox: { root: repo, writable: [worktree], network: false },
    });
    expect(outcome.kind).toBe("exited");
    if (outcome.kind !== "exited") return;
    expect(outcome.stdout).toBe("[end]\n");
    expect(outcome.stdout).not.toContain("s3cret");
    expect(readFileSync(file, "utf8")).toContain("s3cret-pass"); // covered inside only
  });
});
