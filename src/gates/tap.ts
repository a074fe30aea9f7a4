import { Parser } from "tap-parser";
import type { TestResult } from "./junit.js";

/**
 * Per-test outcomes from a TAP stream as ava writes it (`ava --tap`), read with tap-parser: a test point is a
 * case named by its own title. ava puts the file's name before it (`math › adds`) only when a run has more
 * than one file, and relative to the files the run has: the first test file planted beside a project's lone
 * `test.js` would rename every case of it. So the file's part is left out and, as node:test's, a case is its
 * title (a title in two files is one case: either failing fails it). `# SKIP` and `# TODO` are skipped. ava's own lines about a file are that file's entry, named
 * by its path as node:test names one: "<file> exited with a non-zero exit code" (it could not load, or
 * crashed; or "exited due to <signal>") and "No tests found in <file>" (it declares none). The error line ava
 * writes outside any test before a file's exit entry is left out: the exit entry fails for it. In a run of
 * several files (a title with a file's part, or two files' entries) every test's title has its file's part, so
 * an error line is told apart exactly, and the files' workers report concurrently: another file's test can come
 * between an error and its exit entry, so any exit entry after it stands for it. In a one-file run a failing
 * test can be titled like an error, so only the line right before the exit entry is the error. An error ava
 * reports with no exit entry after it still fails, as its own entry.
 */
export function parseTap(text: string): TestResult[] {
  const points = Parser.parse(text)
    .filter((event): event is ["assert", TapPoint] => event[0] === "assert")
    .map(([, point]) => point);
  const names = points.map((point) => String(point.name ?? "").trim());
  const files = names.map((name) => FILE_LINES.map((pattern) => pattern.exec(name)?.[1]).find((found) => found !== undefined));
  const severalFiles = names.some((name) => name.includes(" › ")) || new Set(files.filter((file) => file !== undefined)).size > 1;
  const exitAfter = (at: number) => (severalFiles ? names.slice(at + 1) : names.slice(at + 1, at + 2)).some((name) => EXITED.test(name));
  const results: TestResult[] = [];
  for (const [at, point] of points.entries()) {
    const name = names[at] as string;
    const file = files[at];
    if (file !== undefined) results.push({ id: file, outcome: "failed", file });
    else if (!point.ok && !point.todo && !point.skip && !name.includes(" › ") && CRASH.test(name) && exitAfter(at)) continue;
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

const EXITED = /^(.+?) exited (?:with a non-zero exit code: -?\d+|due to SIG[A-Z0-9]+)$/;
const FILE_LINES = [EXITED, /^No tests found in (.+?)(?:, make sure to import "ava" at the top of your test file)?$/];
/** ava's error lines outside any test: an error's first stack line (`Error [CODE]: …`, `TypeError: …`, `Uncaught exception in …`). */
const CRASH = /^(?:\w*Error\b|Uncaught |Unhandled )/;
