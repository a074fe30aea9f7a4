import { afterAll, beforeAll } from "vitest";
import { type PostgresCluster, startCluster } from "../../src/process/postgres-cluster.js";

/**
 * One real PostgreSQL cluster for the calling test file (Debian's package,
 * `initdb` in a temporary directory, started on a free port of 127.0.0.1),
 * stopped and removed after the file however its tests end; `database()`
 * makes a fresh database per test. Where PostgreSQL cannot start the file's
 * tests are skipped with the reason printed — except in CI (`CI` set),
 * where `.ci/run` installs it and a cluster that cannot start fails the file.
 */
export interface PostgresFixture {
  /** Undefined until `beforeAll` ran, and when the cluster could not start. */
  cluster(): PostgresCluster;
  /** Whether the cluster is up (call inside a test: `if (!pg.available()) return context.skip()`). */
  available(): boolean;
  /** A fresh database's URL. */
  database(): Promise<string>;
}

export function usePostgres(what: string): PostgresFixture {
  let cluster: PostgresCluster | undefined;
  let made = 0;
  beforeAll(async () => {
    const started = await startCluster();
    if (started.ok) {
      cluster = started.cluster;
      return;
    }
    if (process.env.CI) throw new Error(`PostgreSQL could not start for ${what}: ${started.reason}`);
    console.warn(`skipping ${what}: PostgreSQL could not start here (${started.reason})`);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);
  return {
    cluster() {
      if (!cluster) throw new Error("no PostgreSQL cluster (check available() first)");
      return cluster;
    },
    available: () => cluster !== undefined,
    database: async () => {
      if (!cluster) throw new Error("no PostgreSQL cluster (check available() first)");
      made += 1;
      return cluster.createDatabase(`t${process.pid}_${made}`);
    },
  };
}
