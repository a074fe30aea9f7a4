import { posix } from "node:path";
import type { TestResult } from "../gates/junit.js";
import type { GateReport } from "../gates/types.js";
import type { CanaryResult } from "./reviewer-canary.js";

/**
 * Pure pieces of `factory doctor`'s guard proof: the synthetic violations it
 * writes, which existing test file a tests gate is known to run, and what a
 * guard's reports mean. The effects (a scratch worktree, the real gates) are
 * in src/guards/guard-proof.ts.
 */

/** Where the synthetic packet's own files go, relative to the surface dir. */
export const PROBE_DIR = "factory-doctor-probe";

/** One line of the proof: a guard or gate, and whether it fired on its violation and stayed quiet on honest work. */
export interface ProofLine {
  what: string;
  /** undefined: armed. */
  notArmed?: string;
  /** Not a failure: the proof could not be made here (said, so nobody reads silence as armed). */
  unproven?: string;
}

export type Language = "python" | "javascript";

export function languageOf(path: string): Language | undefined {
  if (path.endsWith(".py")) return "python";
  if (/\.[cm]?[jt]sx?$/.test(path)) return "javascript";
  return undefined;
}

/**
 * A test file beside `existing`, named by the same convention (so the same
 * runner collects it), whose one test fails. JavaScript imports its test
 * function the way `existing` does (vitest, node:test, @jest/globals, ava's
 * default export, or the runner's globals), ESM or CommonJS.
 */
export function failingTestBeside(existing: { path: string; text: string }): { path: string; text: string } | undefined {
  const dir = posix.dirname(existing.path);
  const name = posix.basename(existing.path);
  const at = (file: string): string => (dir === "." ? file : `${dir}/${file}`);
  if (languageOf(name) === "python") {
    const file = /_test\.py$/.test(name) ? "factory_doctor_probe_test.py" : "test_factory_doctor_probe.py";
    return { path: at(file), text: 'def test_factory_doctor_probe():\n    assert 1 + 1 == 3, "factory doctor: this test fails on purpose"\n' };
  }
  const suffix = /((?:[.\-_](?:test|spec))?\.[cm]?[jt]sx?)$/.exec(name)?.[1];
  if (!suffix) return undefined;
  // `test-*.js` beside `test-a.js`, and beside ava's lone `test.js`: the names its runner collects there.
  const file = /^test(-|\.[cm]?[jt]sx?$)/.test(name) ? `test-factory-doctor-probe${suffix}` : `factory-doctor-probe${suffix}`;
  // ava's tests are its default export's, never a global `it`.
  const ava = /^\s*import\s+(\w+)\s+from\s+["']ava["']/m.exec(existing.text)?.[1] ?? /^\s*const\s+(\w+)\s*=\s*require\(\s*["']ava["']\s*\)/m.exec(existing.text)?.[1];
  if (ava) {
    const module = /^\s*import\s/m.test(existing.text) ? `import ${ava} from "ava";\n` : `const ${ava} = require("ava");\n`;
    return { path: at(file), text: `${module}${ava}("factory doctor probe", (t) => {\n  t.fail("factory doctor: this test fails on purpose");\n});\n` };
  }
  const body = 'it("factory doctor probe", () => {\n  throw new Error("factory doctor: this test fails on purpose");\n});\n';
  return { path: at(file), text: `${importOfIt(existing.text)}${body}` };
}

function importOfIt(text: string): string {
  const module = /["'](vitest|node:test|@jest\/globals)["']/.exec(text)?.[1];
  if (!module) return "";
  return /^\s*import\s/m.test(text) ? `import { it } from "${module}";\n` : `const { it } = require("${module}");\n`;
}

/** A line that marks a test skipped, in the file's language: the tamper gate must name it. */
export function skipMarkerFor(path: string): string | undefined {
  const language = languageOf(path);
  if (language === "python") return '\n\n@pytest.mark.skip(reason="factory doctor probe")\ndef test_factory_doctor_probe_skipped():\n    pass\n';
  if (language === "javascript") return '\nit.skip("factory doctor probe", () => {});\n';
  return undefined;
}

/** Pure: whether a result belongs to `path` (by its file, its id, or pytest's dotted module name). */
export function resultOfFile(result: TestResult, path: string): boolean {
  if (result.file === path) return true;
  if (result.id.startsWith(`${path}::`) || result.id.startsWith(`${path} `) || result.id === path) return true;
  if (path.endsWith(".py")) {
    const dotted = path.slice(0, -3).replaceAll("/", ".");
    return result.id === dotted || result.id.startsWith(`${dotted}::`) || result.id.startsWith(`${dotted}.`);
  }
  return false;
}

/** Pure: the names of the tests a file defines (Python `def test_…`, JavaScript `it("…")` / `test("…")`). */
export function testNamesIn(text: string): string[] {
  const names = [...text.matchAll(/^\s*(?:async\s+)?def\s+(test\w*)\s*\(/gm)].map((match) => match[1] ?? "");
  names.push(...[...text.matchAll(/\b(?:it|test)\s*\(\s*(["'`])(.+?)\1/g)].map((match) => match[2] ?? ""));
  return names.filter((name) => name !== "");
}

/**
 * The test files (repository paths) a gate's baseline shows it running, with
 * their number of passing cases. A result is tied to a file by its file or id
 * (`aliases`: how the results may name the path), or, for runners whose
 * report names no file (node:test), by a test name the file defines.
 */
export function filesRunBy(results: readonly TestResult[], files: readonly { path: string; text: string }[], aliases: (path: string) => string[]): { path: string; passing: number }[] {
  const found: { path: string; passing: number }[] = [];
  for (const file of files) {
    const names = new Set(testNamesIn(file.text));
    const nameOf = (result: TestResult): string => (result.id.split("::").pop() ?? "").replace(/\[.*\]$/, "");
    const mine = results.filter((result) => !result.collectionError && (aliases(file.path).some((alias) => resultOfFile(result, alias)) || (!result.file && names.has(nameOf(result)))));
    if (mine.length > 0) found.push({ path: file.path, passing: mine.filter((result) => result.outcome === "passed").length });
  }
  return found;
}

/** Pure: the proof line of a guard that must fail on a violation (`fired`) and pass on honest work (`quiet`). */
export function provenBy(what: string, fired: GateReport | undefined, quiet: GateReport | undefined, violation: string): ProofLine {
  if (fired?.status !== "fail") {
    return { what, notArmed: `it ${fired ? `gave "${fired.status}"` : "did not run"} on ${violation}${fired?.summary ? ` (${fired.summary})` : ""}` };
  }
  if (quiet && quiet.status !== "pass" && quiet.status !== "skipped") return { what, notArmed: `it fails on honest work too: ${quiet.summary}` };
  return { what };
}

/** Pure: a reviewer tier's canary as a proof line: armed when it ruled nothing held on a tree that implements nothing. */
export function canaryLine(result: CanaryResult): ProofLine {
  const what = `reviewer tier "${result.tier}": rules nothing held on unimplemented work (${canaryCost(result)})`;
  if (result.problem) return { what, notArmed: result.problem };
  if (result.held.length > 0) return { what, notArmed: `rubber-stamping: it ruled ${result.held.join(", ")} held, though nothing implements ${result.held.length === 1 ? "it" : "them"}` };
  return { what: `${what}: violated ${result.violated}, unverifiable ${result.unverifiable}` };
}

/**
 * Pure: the line of the mutant canary (guards/reviewer-canary.ts): a tier that rules every invariant held on a
 * change its planted tests show broken is rubber-stamping; one that rules any invariant otherwise looked.
 */
export function mutantCanaryLine(result: CanaryResult, input: { packet: string; mutant: string; invariants: number }): ProofLine {
  const what = `reviewer tier "${result.tier}": does not hold every invariant of ${input.packet} with a mutant its tests kill (${input.mutant}; ${canaryCost(result)})`;
  if (result.problem) return { what, notArmed: result.problem };
  if (result.held.length === input.invariants) return { what, notArmed: `rubber-stamping: it ruled every invariant held (${result.held.join(", ")}) on a change its own planted tests show broken` };
  return { what: `${what}: held ${result.held.length}, violated ${result.violated}, unverifiable ${result.unverifiable}` };
}

function canaryCost(result: CanaryResult): string {
  const spend = result.spend;
  return spend?.costUsd !== undefined ? `$${spend.costUsd.toFixed(4)}` : spend?.estimatedUsd !== undefined ? `cost unknown, counted as $${spend.estimatedUsd.toFixed(2)}` : "no call made";
}
