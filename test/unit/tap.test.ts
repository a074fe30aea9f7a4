import { describe, expect, it } from "vitest";
import { normalizeResults } from "../../src/gates/junit.js";
import { parseTap } from "../../src/gates/tap.js";

/** What ava 6.4.1 wrote with --tap for four files: one that cannot load, one with every kind of case, one plain, one that declares no test. */
const AVA = `TAP version 13
not ok 1 - Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/w/src/none.js' imported from /w/test/b.test.js
  ---
    name: Error
    message: Cannot find module '/w/src/none.js' imported from /w/test/b.test.js
    at: 'finalizeResolution (node:internal/modules/esm/resolve:283:11)'
  ...
not ok 2 - test/b.test.js exited with a non-zero exit code: 1
ok 3 - a › skipped # SKIP
not ok 4 - a › todo one # TODO
ok 5 - a › adds
not ok 6 - a › fails
  ---
    name: AssertionError
    assertion: t.is()
    message: ''
  ...
ok 7 - a › known failing
not ok 8 - a › errors
  ---
    name: AssertionError
    message: Error thrown in test
    at: 'file:///w/test/a.test.js:8:29'
  ...
ok 9 - c › c
not ok 10 - No tests found in test/d.test.js

1..7
# tests 6
# pass 3
# skip 1
# fail 6
`;

describe("parseTap", () => {
  it("reads ava's TAP: a case by its own title (the file's part, which depends on the run's files, left out), skips and todos as skipped, a file that cannot load or declares no test by its path", () => {
    expect(normalizeResults(parseTap(AVA), "/w")).toEqual([
      { id: "test/b.test.js", outcome: "failed", file: "test/b.test.js" },
      { id: "skipped", outcome: "skipped" },
      { id: "todo one", outcome: "skipped", reason: "todo" },
      { id: "adds", outcome: "passed" },
      { id: "fails", outcome: "failed" },
      { id: "known failing", outcome: "passed" },
      { id: "errors", outcome: "failed" },
      { id: "c", outcome: "passed" },
      { id: "test/d.test.js", outcome: "failed", file: "test/d.test.js" },
    ]);
  });

  it("keeps an error ava reports outside any test when no file's exit entry stands for it", () => {
    const text = "TAP version 13\nok 1 - a › adds\nnot ok 2 - Uncaught exception in test/a.test.js\n\n1..2\n";
    expect(parseTap(text)).toEqual([
      { id: "adds", outcome: "passed" },
      { id: "Uncaught exception in test/a.test.js", outcome: "failed" },
    ]);
  });

  it("keeps a failing test titled like an error (one file's run names it alone) when it is not the line right before a file's exit entry", () => {
    const text = [
      "TAP version 13",
      "not ok 1 - TypeError on a bad input",
      "ok 2 - adds",
      "not ok 3 - Error: Cannot find module '/w/src/none.js'",
      "not ok 4 - test/b.test.js exited with a non-zero exit code: 1",
      "",
      "1..4",
      "",
    ].join("\n");
    expect(parseTap(text)).toEqual([
      { id: "TypeError on a bad input", outcome: "failed" },
      { id: "adds", outcome: "passed" },
      { id: "test/b.test.js", outcome: "failed", file: "test/b.test.js" },
    ]);
  });

  it("leaves out a file's error line when another file's test came between it and the file's exit entry (their workers report concurrently)", () => {
    // What ava 6.4.1 wrote for test.js beside a test/double.test.js that cannot load yet, in the order a loaded machine can interleave it.
    const text = [
      "TAP version 13",
      "not ok 1 - Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/w/src/double.js' imported from /w/test/double.test.js",
      "ok 2 - test › adds",
      "not ok 3 - test/double.test.js exited with a non-zero exit code: 1",
      "",
      "1..3",
      "",
    ].join("\n");
    expect(parseTap(text)).toEqual([
      { id: "adds", outcome: "passed" },
      { id: "test/double.test.js", outcome: "failed", file: "test/double.test.js" },
    ]);
  });

  it("reads a file killed by a signal as that file's entry, its error line left out", () => {
    const text = "TAP version 13\nnot ok 1 - RangeError: Maximum call stack size exceeded\nok 2 - a › adds\nnot ok 3 - test/b.test.js exited due to SIGKILL\n\n1..3\n";
    expect(parseTap(text)).toEqual([
      { id: "adds", outcome: "passed" },
      { id: "test/b.test.js", outcome: "failed", file: "test/b.test.js" },
    ]);
  });

  it("reads nothing from what is not TAP", () => {
    expect(parseTap("<testsuite/>")).toEqual([]);
  });
});
