import { Parser } from "tap-parser";
import type { TestResult } from "./junit.js";

/**
 * Per-test outcomes from a TAP stream as ava writes it (`ava --tap`), read with tap-parser: a test point is a
 * case named by its own title. ava puts the file's name before it (`math › adds`) only when a run has more
 * than one file, and relative to the files the run has: the first test file planted beside a project's lone
 * `test.js` would rename every case of it. So the file's part is left out and, as node:test's, a case is its
 * title (a title in two files is one case: either failing fails it). `# SKIP` and `# TODO` are skipped. ava's own lines about a file are that file's entry, named
 * by its path as node:test names one: "<file> exited with a non-zero exit code" (it could not load, or
 * crashed) and "No tests found in <file>" (it declares none). The error line ava writes right before a file's
 * exit entry is left out: the exit entry fails for it. An error ava reports outside any test with no exit entry
 * after it still fails, as its own entry.
 */
export function parseTap(text: string): TestResult[] {
  const points = Parser.parse(text)
    .filter((event): event is ["assert", TapPoint] => event[0] === "assert")
    .map(([, point]) => point);
  const results: TestResult[] = [];
  for (const [at, point] of points.entries()) {
    const name = String(point.name ?? "").trim();
    const file = FILE_LINES.map((pattern) => pattern.exec(name)?.[1]).find((found) => found !== undefined);
    if (file !== undefined) results.push({ id: file, outcome: "failed", file });
    // Only the line right before a file's exit entry is that file's error: a failing test titled like an error elsewhere is a test.
    else if (!point.ok && !point.todo && !point.skip && !name.includes(" › ") && CRASH.test(name) && EXITED.test(String(points[at + 1]?.name ?? "").trim())) continue;
    else results.push({ id: name.split(" › ").at(-1) ?? name, outcome: point.skip || point.todo ? "skipped" : point.ok ? "passed" : "failed", ...(point.todo ? { reason: "todo" } : {}) });
  }
  return results;
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
