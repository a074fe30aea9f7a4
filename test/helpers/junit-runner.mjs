// A test runner for the loop tests' target repositories that is only a
// pass/fail runner there: every test file under the given paths is imported
// into this one process, where node:test runs its tests and writes the JUnit
// report named by the usual flags:
//   node --test-reporter=junit --test-reporter-destination=<file> junit-runner.mjs test/
// `node --test` starts a runner and then a process per file (three node
// processes for the two files of a loop test, ~0.4 s); this is one (~0.15 s).
// A file that cannot be loaded becomes a failing case named by its path.
// The tests about node:test itself (a file that exits early, a file named by
// its absolute path, one process per file) keep the real `node --test`.
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";

function testFiles(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => name !== "node_modules" && !name.startsWith("."))
    .sort()
    .flatMap((name) => {
      const inner = join(path, name);
      return statSync(inner).isDirectory() ? testFiles(inner) : /\.(c|m)?js$/.test(name) ? [inner] : [];
    });
}

for (const file of process.argv.slice(2).flatMap(testFiles)) {
  try {
    await import(pathToFileURL(resolve(file)).href);
  } catch (error) {
    test(file, () => {
      throw error;
    });
  }
}
