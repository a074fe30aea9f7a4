import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup/python-path.ts", "test/setup/worktrees-dir.ts"],
    testTimeout: 90_000, // a ceiling, not a measurement: three files at a time slow each test down
    hookTimeout: 30_000,
    pool: "forks",
    // The tests wait on processes (git, bwrap, agents, test runners) more than they compute:
    // three files at a time finish the suite in about half the time on two cores.
    maxWorkers: 3,
  },
});
