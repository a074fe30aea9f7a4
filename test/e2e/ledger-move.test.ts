import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { removedAfterEach } from "../helpers/git-repo.js";
import { makeLoopRepo } from "../helpers/loop-repo.js";
import { usePostgres } from "../helpers/postgres.js";

/** `ledger migrate`, `export` and `import`: a night's ledger moves between the file and PostgreSQL, its chain verified on both sides. */
const database = usePostgres("the ledger export and import tests");
const newRepo = removedAfterEach(afterEach, makeLoopRepo);
const HONEST = { P01: { implementer: [{ write: { "src/double.js": "export function double(n) {\n  return n * 2;\n}\n" } }], reviewer: [{ invariants: "held", evidence: "src/double.js:2" }] } };

describe("moving a ledger between backends", { timeout: 180_000 }, () => {
  it("round-trips a night's ledger from the file to PostgreSQL and back, exactly, the chain verified", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = newRepo({ script: HONEST });
    const night = runCli(["run"], repo.dir);
    expect(night.code, night.stderr).toBe(0);
    const fileLines = readFileSync(join(repo.dir, ".factory/state/ledger.jsonl"), "utf8");

    const migrated = runCli(["ledger", "migrate"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/postgres:\/\/factory:\*\*\*@127\.0\.0\.1:\d+\/\w+: migrated the schema from version 0 to 3/);
    expect(migrated.stdout + migrated.stderr).not.toContain(database.cluster().password);
    expect(runCli(["ledger", "migrate"], repo.dir, { FACTORY_LEDGER_URL: url }).stdout).toMatch(/the schema is up to date \(version 3\)/);

    const exported = runCli(["ledger", "export", "night.jsonl"], repo.dir);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(join(repo.dir, "night.jsonl"), "utf8")).toBe(fileLines);
    const imported = runCli(["ledger", "import", "night.jsonl"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/imported \d+ event\(s\) into postgres:\/\/factory:\*\*\*@.*: 1 packet\(s\), .*the chain holds on both sides/);
    // The same night, read from the database: status and verify work unchanged against it.
    const status = runCli(["status", "--json"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect((JSON.parse(status.stdout) as { packets: { id: string; state: string }[] }).packets).toMatchObject([{ id: "P01", state: "merged" }]);
    expect(runCli(["ledger", "verify"], repo.dir, { FACTORY_LEDGER_URL: url }).stdout).toMatch(/the hash chain holds, events 1–\d+: 1 packet\(s\), 1 run\(s\)/);
    // A database that holds events refuses a second import, writing nothing.
    const again = runCli(["ledger", "import", "night.jsonl"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds \d+ event\(s\); import only into an empty ledger\. Nothing was imported\./);
    // And back: the database's export is the file, byte for byte.
    const back = runCli(["ledger", "export", "back.jsonl"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(back.code, back.stderr).toBe(0);
    expect(readFileSync(join(repo.dir, "back.jsonl"), "utf8")).toBe(fileLines);
  });

  it("refuses to import a file whose chain is broken, and to export over an existing file", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = newRepo({ script: HONEST });
    expect(runCli(["run"], repo.dir).code).toBe(0);
    const lines = readFileSync(join(repo.dir, ".factory/state/ledger.jsonl"), "utf8").split("\n");
    lines[2] = (lines[2] ?? "").replace('"kind"', '"edited":true,"kind"');
    writeFileSync(join(repo.dir, "edited.jsonl"), lines.join("\n"));
    const refused = runCli(["ledger", "import", "edited.jsonl"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^edited\.jsonl:4: the ledger.s hash chain breaks here/m);
    expect(refused.stderr).toContain("Nothing was imported.");
    expect(runCli(["ledger", "verify"], repo.dir, { FACTORY_LEDGER_URL: url }).stdout).toMatch(/there is no ledger \(yet\)/);
    writeFileSync(join(repo.dir, "taken.jsonl"), "mine\n");
    const over = runCli(["ledger", "export", "taken.jsonl"], repo.dir);
    expect(over.code).toBe(2);
    expect(readFileSync(join(repo.dir, "taken.jsonl"), "utf8")).toBe("mine\n");
  });

  it("doctor names the ledger without its password: reachable, with its schema, or why not", async (context) => {
    if (!database.available()) return context.skip();
    const url = await database.database();
    const repo = newRepo({ script: HONEST });
    const reachable = runCli(["doctor", "--no-guards", "--no-models"], repo.dir, { FACTORY_LEDGER_URL: url });
    expect(reachable.stdout).toMatch(
      /^ok {4}the ledger: PostgreSQL at postgres:\/\/factory:\*\*\*@127\.0\.0\.1:\d+\/\w+, schema version 0 of 3 \(`factory ledger migrate` or the next run brings it up to date\)$/m,
    );
    expect(reachable.stdout).not.toContain(database.cluster().password);
    const away = runCli(["doctor", "--no-guards", "--no-models"], repo.dir, { FACTORY_LEDGER_URL: "postgres://factory:hunter2-secret@127.0.0.1:1/factory" });
    expect(away.code).toBe(1);
    expect(away.stdout).toMatch(/^FAIL {2}the ledger: PostgreSQL at postgres:\/\/factory:\*\*\*@127\.0\.0\.1:1\/factory\n {6}the ledger database .* cannot be reached: connect ECONNREFUSED/m);
    expect(away.stdout + away.stderr).not.toContain("hunter2");
    // status while the database is away says so, exit 1: the environment's fault, not "a bug in factory".
    const status = runCli(["status"], repo.dir, { FACTORY_LEDGER_URL: "postgres://factory:hunter2-secret@127.0.0.1:1/factory" });
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/^factory: stopped: the ledger database postgres:\/\/factory:\*\*\*@127\.0\.0\.1:1\/factory cannot be reached: connect ECONNREFUSED .*run the command again\.$/m);
    expect(status.stderr).not.toContain("internal error");
    expect(status.stdout + status.stderr).not.toContain("hunter2");
    expect(runCli(["doctor", "--no-guards", "--no-models"], repo.dir).stdout).toMatch(/^ok {4}the ledger: the file \.factory\/state\/ledger\.jsonl/m);
  });
});
