import { Parser } from "tap-parser";
import type { TestResult } from "./junit.js";

/**
 * Per-test outcomes from a TAP stream as ava writes it (`ava --tap`), read with tap-parser: a test point is a
 * case named by its own title. ava puts the file's name before it (`math › adds`) only when a run has more
 * than one file, and relative to the files the run has: the first test file planted beside a project's lone
 * `test.js` would rename every case of it. So the file's part is left out and, as node:test's, a case is its
 * title (a title in two files is one case: either failing fails it). `# SKIP` and `# TODO` are skipped. ava's own lines about a file are that file's entry, named
 * by its path as node:test names one: "<file> exited with a non-zero exit code" (it could not load, or
 * crashed) and "No tests found in <file>" (it declares none). The error line ava writes before a file's exit
 * entry is left out: the exit entry fails for it.
 */
export function parseTap(text: string): TestResult[] {
  const points = Parser.parse(text)
    .filter((event): event is ["assert", TapPoint] => event[0] === "assert")
    .map(([, point]) => point);
  const results: TestResult[] = [];
  let fileExits = false;
  const crashes: TestResult[] = [];
  for (const point of points) {
    const name = String(point.name ?? "").trim();
    const file = FILE_LINES.map((pattern) => pattern.exec(name)?.[1]).find((found) => found !== undefined);
    if (file !== undefined) {
      fileExits ||= EXITED.test(name);
      results.push({ id: file, outcome: "failed", file });
    } else if (!point.ok && !point.todo && !point.skip && !name.includes(" › ") && CRASH.test(name)) {
      crashes.push({ id: name, outcome: "failed" });
    } else {
      results.push({ id: name.split(" › ").at(-1) ?? name, outcome: point.skip || point.todo ? "skipped" : point.ok ? "passed" : "failed", ...(point.todo ? { reason: "todo" } : {}) });
    }
  }
  // Without a file's exit entry to stand for it, an error ava reports outside any test still fails.
  return fileExits ? results : [...crashes, ...results];
}

interface TapPoint {
  ok: boolean;
  name?: string;
  skip?: boolean | string;
  todo?: boolean | string;
}

const EXITED = /^(.+?) exited with a non-zero exit code: -?\d+$/;
const FILE_LINES = [EXITED, /^No tests found in (.+?)(?:, make sure to import "ava" at the top of your test file)?$/];
/** ava's error lines outside any test: an error's first stack line (`Error [CODE]: …`, `TypeError: …`, `Uncaught exception in …`). */
const CRASH = /^(?:\w*Error\b|Uncaught |Unhandled )/;
