/**
 * What a parser says about the assertions of each test of a file: how many
 * run whenever the test runs, how many only under a condition (an `if`, a
 * loop, after an early `return`, in a callback, in a `try` that swallows the
 * failure), and which cannot fail (a tuple or a constant). Line-based rules
 * cannot see an assert moved under an `if` or turned into
 * `assert (x == 1, "msg")`; these facts can. Python files are read by
 * Python's parser (python-asserts.ts), JavaScript and TypeScript by
 * TypeScript's (js-asserts.ts).
 */
export interface TestAsserts {
  line: number;
  /** Assertions that run whenever the test runs, times the test's parametrized cases. */
  plain: number;
  /** Under a condition, or swallowed. */
  conditional: number;
  /** Lines of assertions in a try whose handler catches the failure and goes on. */
  swallowed: number[];
  /** Lines of assertions that are always true: `assert (a, b)`, `expect(true).toBe(true)`. */
  constant: number[];
}

/** Per file: test name → its facts; undefined when the file does not parse (a syntax error fails elsewhere). */
export type AssertFacts = Map<string, TestAsserts> | undefined;

/**
 * Pure: how a test file's change weakens the tests it keeps, by their parsed assertions: fewer that run
 * every time (made conditional, moved out of the body, removed), new ones that cannot fail, new ones
 * whose failure is caught and ignored. Tests that are gone are the line rules' business.
 */
export function weakenedAsserts(before: AssertFacts, after: AssertFacts): { line: number; message: string }[] {
  if (!before || !after) return [];
  const findings: { line: number; message: string }[] = [];
  for (const [name, now] of after) {
    const was = before.get(name);
    if (!was) continue;
    if (now.constant.length > was.constant.length) findings.push({ line: now.constant.at(-1) ?? now.line, message: `makes an assertion of "${name}" a tuple or a constant, which is always true` });
    if (now.swallowed.length > was.swallowed.length) findings.push({ line: now.swallowed.at(-1) ?? now.line, message: `catches and ignores the failure of an assertion of "${name}"` });
    else if (now.plain < was.plain) {
      const moved = now.conditional > was.conditional ? "made conditional (under an if, a loop or a try)" : "removed or moved out of the test's body";
      findings.push({ line: now.line, message: `"${name}" has fewer assertions that always run (${was.plain} before, ${now.plain} now): ${moved}` });
    }
  }
  return findings;
}
