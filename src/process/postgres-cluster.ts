import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";

/**
 * A throwaway PostgreSQL cluster of Debian's `postgresql` package: `initdb`
 * in a directory of its own, `pg_ctl start` on a free port of 127.0.0.1,
 * password authentication for TCP (so the URL carries credentials, as a real
 * one does), and `stop` removes the directory. For the tests (one cluster
 * per test file) and `factory dev-postgres` (a database to try several
 * workers with). initdb refuses root: as root, the cluster runs as the
 * package's `postgres` user (or `nobody`).
 */
export interface PostgresCluster {
  dir: string;
  port: number;
  user: string;
  password: string;
  /** The URL of a database of the cluster (`postgres`, the default one, until `createDatabase` made others). */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown): connections are cut, the data stays. */
  stopServer(): Promise<void>;
  /** Starts it again on the same port: a database restart. */
  startServer(): Promise<void>;
  /** Stops the server and removes the directory. */
  stop(): Promise<void>;
}

export type ClusterStart = { ok: true; cluster: PostgresCluster } | { ok: false; reason: string };

const USER = "factory";

/** The directory of the newest installed PostgreSQL's programs (`/usr/lib/postgresql/<version>/bin`), or undefined. */
export function postgresBin(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(base, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], "bin") : undefined;
}

/** Makes and starts a cluster, or says why it cannot (no package, no non-root user, a start that failed, with its log's tail). */
export async function startCluster(options: { dir?: string; port?: number } = {}): Promise<ClusterStart> {
  const bin = postgresBin();
  if (!bin) return { ok: false, reason: "PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/initdb; Debian's package is `postgresql`)" };
  const runAs = serverUser();
  if (!runAs) return { ok: false, reason: "running as root with neither a `postgres` nor a `nobody` user to run the server as (initdb refuses root)" };
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "factory-pg-")));
  const closed = closedAncestor(dirname(resolve(dir)), runAs);
  if (closed) return { ok: false, reason: `the server runs as uid ${runAs.uid}, which cannot enter ${closed}; choose a directory it can reach (under ${tmpdir()})` };
  await mkdir(dir, { recursive: true });
  const data = join(dir, "data");
  const password = randomBytes(12).toString("hex");
  const pwfile = join(dir, "pwfile");
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs.uid !== process.getuid?.()) {
    chownSync(dir, runAs.uid, runAs.gid);
    chownSync(pwfile, runAs.uid, runAs.gid);
  }
  await chmod(dir, 0o700);
  const init = await exec(join(bin, "initdb"), ["-D", data, "-U", USER, "--pwfile", pwfile, "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync"], runAs);
  await rm(pwfile, { force: true });
  if (!init.ok) {
    if (!options.dir) await rm(dir, { recursive: true, force: true });
    return { ok: false, reason: `initdb failed: ${init.output.trim().split("\n").slice(-5).join(" / ")}` };
  }
  const port = options.port ?? (await freePort());
  const log = join(dir, "server.log");
  const startServer = async (): Promise<void> => {
    const started = await exec(
      join(bin, "pg_ctl"),
      ["start", "-w", "-t", "60", "-D", data, "-l", log, "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`],
      runAs,
    );
    if (!started.ok) throw new Error(`pg_ctl start failed: ${started.output.trim()} ${tail(log)}`);
  };
  const stopServer = async (): Promise<void> => {
    await exec(join(bin, "pg_ctl"), ["stop", "-w", "-t", "60", "-m", "fast", "-D", data], runAs);
  };
  try {
    await startServer();
  } catch (error) {
    if (!options.dir) await rm(dir, { recursive: true, force: true });
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const url = (database = "postgres"): string => `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
  const cluster: PostgresCluster = {
    dir,
    port,
    user: USER,
    password,
    url,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name: ${name}`);
      const made = await exec(join(bin, "createdb"), ["-h", dir, "-p", String(port), "-U", USER, name], runAs);
      if (!made.ok) throw new Error(`createdb ${name} failed: ${made.output.trim()}`);
      return url(name);
    },
    stopServer,
    startServer,
    async stop() {
      await stopServer();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return { ok: true, cluster };
}

/** The first existing directory above a cluster's that the server's user may not pass through, if any. */
function closedAncestor(from: string, as: { uid: number; gid: number }): string | undefined {
  if (as.uid === (process.getuid?.() ?? -1)) return undefined;
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const { mode, uid, gid } = statSync(dir);
      const passable = uid === as.uid ? mode & 0o100 : gid === as.gid ? mode & 0o010 : mode & 0o001;
      if (!passable) return dir;
    } catch {
      // not there yet: made by mkdir, as this user
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The user the server runs as: this one, unless it is root (then `postgres`, else `nobody`). */
function serverUser(): { uid: number; gid: number } | undefined {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? uid };
  for (const name of ["postgres", "nobody"]) {
    const entry = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .find((fields) => fields[0] === name);
    if (entry?.[2] !== undefined && entry[3] !== undefined) return { uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  return undefined;
}

function exec(file: string, args: string[], as: { uid: number; gid: number }): Promise<{ ok: boolean; output: string }> {
  const me = userInfo().uid;
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      // The server must not inherit a terminal's or a test's environment it could trip on (PGDATA, LC_*).
      { ...(as.uid !== me ? { uid: as.uid, gid: as.gid } : {}), env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" }, cwd: "/", timeout: 120_000 },
      (error, stdout, stderr) => resolve({ ok: !error, output: `${stdout}${stderr}${error && !stderr ? error.message : ""}` }),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function tail(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-5).join(" / ");
  } catch {
    return "";
  }
}

/** Stops the cluster made in `dir` by another process (`factory dev-postgres stop`) and removes the directory. */
export async function stopClusterAt(dir: string): Promise<{ ok: true } | { ok: false; reason: string }> {
  const bin = postgresBin();
  const runAs = serverUser();
  if (!bin || !runAs) return { ok: false, reason: "PostgreSQL is not installed here" };
  if (!existsSync(join(dir, "data", "PG_VERSION"))) return { ok: false, reason: `${dir} holds no cluster` };
  const stopped = await exec(join(bin, "pg_ctl"), ["stop", "-w", "-t", "60", "-m", "fast", "-D", join(dir, "data")], runAs);
  if (!stopped.ok && !/not running|No such process|is the server running/i.test(stopped.output)) return { ok: false, reason: `pg_ctl stop failed: ${stopped.output.trim()}` };
  await rm(dir, { recursive: true, force: true });
  return { ok: true };
}
