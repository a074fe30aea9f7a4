import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresBin } from "../../src/process/postgres-cluster.js";
import { runCli } from "../helpers/cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    if (existsSync(join(dir, "pg", "data"))) runCli(["dev-postgres", "stop", "--dir", join(dir, "pg")], dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("factory dev-postgres", { timeout: 120_000 }, () => {
  it("starts a PostgreSQL to try workers with, its URL in a file only the user reads and masked where printed; stop removes it", async (context) => {
    if (!postgresBin()) {
      if (process.env.CI) throw new Error("PostgreSQL is not installed (.ci/run installs it)");
      console.warn("skipping factory dev-postgres: PostgreSQL is not installed here");
      return context.skip();
    }
    const dir = mkdtempSync(join(tmpdir(), "factory-dev-pg-"));
    dirs.push(dir);
    chmodSync(dir, 0o755); // as root the server runs as the postgres user, which must reach it
    const pgDir = join(dir, "pg");
    const started = runCli(["dev-postgres", "start", "--dir", pgDir], dir);
    expect(started.code, started.stderr).toBe(0);
    const url = readFileSync(join(pgDir, "url"), "utf8").trim();
    expect(statSync(join(pgDir, "url")).mode & 0o077).toBe(0);
    const password = new URL(url).password;
    expect(password.length).toBeGreaterThan(8);
    expect(started.stdout).not.toContain(password);
    expect(started.stdout).toContain(`export FACTORY_LEDGER_URL="$(cat ${join(pgDir, "url")})"`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query("SELECT current_database() AS name")).rows[0]).toEqual({ name: "factory" });
    await client.end();
    // A directory the server's user cannot enter is refused with the reason, not initdb's.
    if (process.getuid?.() === 0) {
      const closed = mkdtempSync(join(tmpdir(), "factory-dev-pg-closed-"));
      dirs.push(closed);
      const refused = runCli(["dev-postgres", "start", "--dir", join(closed, "pg")], dir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`cannot enter ${closed}; choose a directory it can reach`);
    }
    const stopped = runCli(["dev-postgres", "stop", "--dir", pgDir], dir);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(existsSync(pgDir)).toBe(false);
  });
});
