import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A HOME of the test file's own for each test (`const home = useTemporaryHome(beforeEach, afterEach, "pnpm")`):
 * what a test puts there (a program, a tool's store) is never seen by the suite's other files, which run
 * at the same time and watch the real HOME; it is removed after each test and HOME set back.
 */
export function useTemporaryHome(beforeEach: (hook: () => void) => void, afterEach: (hook: () => void) => void, name: string): string {
  const realHome = process.env.HOME;
  const home = join(tmpdir(), `factory-${name}-home-${process.pid}`);
  beforeEach(() => {
    mkdirSync(home, { recursive: true });
    process.env.HOME = home;
  });
  afterEach(() => {
    process.env.HOME = realHome;
    rmSync(home, { recursive: true, force: true });
  });
  return home;
}
