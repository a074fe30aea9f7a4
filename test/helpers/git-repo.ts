import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { worktreesDir } from "../../src/loop/context.js";

/** A throwaway git repository in the OS temp dir: branch main, identity set, signing and gc off. */
export interface TestRepo {
  dir: string;
  git(...args: string[]): string;
  write(path: string, text: string): void;
  read(path: string): string;
  exists(path: string): boolean;
  commit(message: string): string;
  cleanup(): void;
}

export function makeRepo(options: { initialCommit?: boolean } = {}): TestRepo {
  const dir = mkdtempSync(join(tmpdir(), "factory-test-"));
  const git = (...args: string[]): string => execFileSync("git", args, { cwd: dir, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  git("init", "--quiet", "--initial-branch", "main");
  git("config", "user.name", "Test User");
  git("config", "user.email", "test@factory.invalid");
  git("config", "commit.gpgsign", "false");
  git("config", "gc.auto", "0");
  const repo: TestRepo = {
    dir,
    git,
    write(path, text) {
      const full = join(dir, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    },
    read: (path) => readFileSync(join(dir, path), "utf8"),
    exists: (path) => existsSync(join(dir, path)),
    commit(message) {
      git("add", "--all");
      git("commit", "--quiet", "--allow-empty", "-m", message);
      return git("rev-parse", "HEAD").trim();
    },
    cleanup: () => {
      rmSync(worktreesDir(dir), { recursive: true, force: true }); // the factory's worktrees of it live outside it
      rmSync(dir, { recursive: true, force: true });
    },
  };
  if (options.initialCommit !== false) {
    repo.write("README.md", "# target\n");
    repo.commit("initial");
  }
  return repo;
}

/**
 * `make`, with everything it makes removed after each test (a test may make
 * more than one): `const newRepo = removedAfterEach(afterEach, makeRepo)`.
 */
export function removedAfterEach<A extends unknown[], R extends { cleanup(): void }>(afterEach: (hook: () => void) => void, make: (...args: A) => R): (...args: A) => R {
  const made: R[] = [];
  afterEach(() => {
    for (const item of made.splice(0)) item.cleanup();
  });
  return (...args) => {
    const item = make(...args);
    made.push(item);
    return item;
  };
}

/** A clone of `remote` at `dir` (with `cloneArgs`: `--depth 1`), as a worker's machine has it: its own git identity, signing off. */
export function cloneAsWorker(remote: string, dir: string, cloneArgs: readonly string[] = []): string {
  execFileSync("git", ["clone", "--quiet", ...cloneArgs, remote, dir]);
  for (const [key, value] of [
    ["user.name", "Worker"],
    ["user.email", "worker@factory.invalid"],
    ["commit.gpgsign", "false"],
  ] as const)
    execFileSync("git", ["config", key, value], { cwd: dir });
  return dir;
}
