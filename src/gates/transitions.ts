/**
 * Every transition a test can make between the baseline (or, for planted and hidden tests, the tree right
 * after planting) and the candidate, with the factory's verdict on it. This table is what the gates decide,
 * written down: test/integration/test-transitions.test.ts drives every cell through real pytest, node:test, vitest, jest, mocha, ava and the
 * factory's own judging code, and the table in docs/concepts/how-tests-are-judged.md is rendered from it (and checked to be).
 */

/** How one test case stands in one run. */
export type Standing = "passed" | "failed" | "errored" | "skipped" | "xfailed" | "absent" | "uncollectable" | "no-case";

/** Whose test it is. */
export type Role = "existing" | "planted" | "added" | "retired" | "holdout";

/**
 * - `pass`: the gate passes on it; `FAIL`: the gate fails, naming it.
 * - `not blamed`: it failed on the baseline's own tree the same way: said, not the work's.
 * - `not checked`: skipped for the same reason before and after the work (a test for another platform): said, not judged here.
 * - `defective`: the packet itself is wrong (its tests cannot tell right from wrong): blocked before any work.
 * - `refused`: the tip's suite cannot be measured (pytest stops at a file it cannot collect): nothing runs until it is fixed.
 * - `undefended`: passes, and should not: a known hole, said so here and in the docs.
 * - `n/a`: not a transition (a test that is never there).
 */
export type Verdict = "pass" | "FAIL" | "not blamed" | "not checked" | "defective" | "refused" | "undefended" | "n/a";

/** The candidate's standings, in the table's column order. */
export const AFTER: readonly Standing[] = ["passed", "failed", "errored", "skipped", "xfailed", "absent", "uncollectable", "no-case"];

export const STANDING_MEANS: Record<Standing, string> = {
  passed: "the case ran and passed",
  failed: "an assertion in the case failed",
  errored: "the case errored outside its assertions (a fixture or setup raised)",
  skipped: "the runner skipped it (a skip mark, a platform condition)",
  xfailed: "marked as an expected failure, and it failed (pytest's xfail)",
  absent: "the case is not in the report, while its file still yields others",
  uncollectable: "its file cannot be collected or loaded (an import error)",
  "no-case": "its file loads and yields no case at all",
};

interface RoleTable {
  /** What "before" is for this role, and what else the test's file holds. */
  means: string;
  rows: Partial<Record<Standing, readonly Verdict[]>>;
  /** Said under the table: verdicts about the whole packet, and why the cells are what they are. */
  notes: readonly string[];
}

const ALL = (verdict: Verdict): Verdict[] => AFTER.map(() => verdict);

export const TRANSITIONS: Record<Role, RoleTable> = {
  existing: {
    means: "a team's test at the tip, untouched by the packet; before is the tip's baseline. Its file holds another case that passes throughout.",
    rows: {
      passed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL"],
      failed: ["pass", "not blamed", "not blamed", "pass", "pass", "pass", "FAIL", "FAIL"],
      errored: ["pass", "not blamed", "not blamed", "pass", "pass", "pass", "FAIL", "FAIL"],
      skipped: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "FAIL", "FAIL"],
      xfailed: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "FAIL", "FAIL"],
      uncollectable: ALL("refused"),
      "no-case": ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "FAIL", "pass"],
    },
    notes: [
      "A test that passed before and does anything but pass now is a regression; a parametrized test split into cases that all pass is not missing.",
      '"Already failing at the baseline" is decided on the baseline\'s own tree, measured there (or seeded by the landing that made the tip, which checked that every failure on the landed tree failed on its own baseline).',
      "A file that cannot be collected after the work fails the gate whatever it held: pytest stops the whole run at it.",
    ],
  },
  planted: {
    means: "a test file the packet plants, new at the tip; before is the tree right after planting, before any work. Its file holds another case that fails before the work and passes after.",
    rows: {
      passed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL"],
      failed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL"],
      errored: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL"],
      skipped: ["pass", "FAIL", "FAIL", "not checked", "FAIL", "FAIL", "FAIL", "FAIL"],
      xfailed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL", "FAIL"],
      absent: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "n/a", "FAIL", "FAIL"],
      uncollectable: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      "no-case": ALL("defective"),
    },
    notes: [
      "After the work every case of every planted file passes, however its cases came to be known (a file that could not be collected before the work names none): the only exception is a case skipped for the same reason before and after (this machine does not run it).",
      "An expected failure (xfail) ran and failed: it is no skip, and never passes a planted file.",
      "A case the planted files yielded before the work must still be there after it.",
      "Undefended: a file that could not be collected before the work names no case, so a case the work makes vanish from it (a test defined under a condition on the source) is not seen; the file's other cases must still pass.",
      "Defective, whatever happens after: no case of the planted files fails (or fails to load) before the work; a planted file yields no case; a planted case flips between runs.",
    ],
  },
  added: {
    means: "a test file the agent adds; absent before.",
    rows: {
      absent: ["pass", "FAIL", "FAIL", "pass", "pass", "n/a", "FAIL", "pass"],
    },
    notes: ["Every test the agent adds passes or is skipped: a new test that fails, errors or cannot be collected fails the gate."],
  },
  retired: {
    means: "a team's test the packet names in retired_tests; before is the tip's baseline. Its file holds another case, not retired, that passes throughout.",
    rows: {
      passed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "pass", "FAIL", "FAIL"],
      failed: ["pass", "not blamed", "not blamed", "pass", "pass", "pass", "FAIL", "FAIL"],
    },
    notes: ["A retired test may be missing; one still there that fails, errors or is skipped is judged as any other: retire a test by removing it."],
  },
  holdout: {
    means:
      "a hidden test of the team's (.factory/holdout/ID/), copied in after the gates; before is the tree right after planting. Its file holds another case that fails before the work and passes after.",
    rows: {
      passed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      failed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      errored: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      skipped: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      xfailed: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      uncollectable: ["pass", "FAIL", "FAIL", "FAIL", "FAIL", "undefended", "FAIL", "FAIL"],
      "no-case": ALL("defective"),
    },
    notes: [
      "Every hidden case that runs after the work must pass; skipped is not passing.",
      "Undefended: a hidden case the work makes disappear (its parametrization emptied) while the file's other cases pass. The hidden run after the work does not know the cases the run before it saw.",
      "Defective, whatever happens after: every hidden case passes before the work, or the hidden files yield no case.",
    ],
  },
};

/** The runners every cell is driven through. */
export type Runner = "pytest" | "node:test" | "vitest" | "jest" | "mocha" | "ava";

/**
 * Standings a runner has no outcome of its own for, and reports as another: its cells are that standing's.
 * (node:test reports a failing todo as skipped with an expected failure, as pytest reports an xfail.)
 */
export const REPORTED_AS: readonly { runners: readonly Runner[]; standing: Standing; as: Standing; why: string }[] = [
  {
    runners: ["vitest", "jest", "ava"],
    standing: "xfailed",
    as: "passed",
    why: "their expected failure (vitest's `test.fails`, jest's and ava's `test.failing`) asserts that its body fails: a body that fails is a passing test in their reports",
  },
  {
    runners: ["mocha"],
    standing: "xfailed",
    as: "skipped",
    why: "mocha has no expected failure: a known failure is marked pending (`it.skip`, or `this.skip()` in its body), which its report shows as skipped, with no reason",
  },
  {
    runners: ["vitest", "jest", "ava"],
    standing: "no-case",
    as: "uncollectable",
    why: 'they fail a file that yields no test ("No test suite found", "Your test suite must contain at least one test", "No tests found in"): one failing entry named by its path, as a file that cannot load',
  },
];

/** Where a runner's own behaviour gives another verdict than the table's (the table is pytest's), and why. */
export const RUNNER_ROWS: readonly { runner: Runner; role: Role; before: Standing; verdicts: readonly Verdict[]; why: string }[] = [
  {
    runner: "node:test",
    role: "existing",
    before: "uncollectable",
    verdicts: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "not blamed", "pass"],
    why: "node:test runs each file in a process of its own: a file that fails to load is one failing entry named by its path, and the rest of the suite runs",
  },
  {
    runner: "vitest",
    role: "existing",
    before: "uncollectable",
    verdicts: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "not blamed", "not blamed"],
    why: "vitest, too, reports a file it cannot load as one failing entry named by its path and runs the rest of the suite",
  },
  {
    runner: "jest",
    role: "existing",
    before: "uncollectable",
    verdicts: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "not blamed", "not blamed"],
    why: 'jest, too, runs each file on its own: jest-junit reports one that cannot load as a failing "Test suite failed to run" entry named by its path (with JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true, as `factory init` writes the gate; without it the file is left out of the report)',
  },
  {
    runner: "mocha",
    role: "existing",
    before: "uncollectable",
    verdicts: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "not blamed", "pass"],
    why: "run with --parallel, as `factory init` writes the gate, mocha loads each file in a worker of its own: one that cannot load is a failing entry named by its path, and the rest of the suite runs (run serially, it stops the whole run and writes no report: the baseline is refused)",
  },
  {
    runner: "ava",
    role: "existing",
    before: "uncollectable",
    verdicts: ["pass", "FAIL", "FAIL", "pass", "pass", "pass", "not blamed", "not blamed"],
    why: 'ava runs each file in a worker of its own: one that cannot load is a failing "… exited with a non-zero exit code" entry named by its path, and the rest of the suite runs',
  },
];

/** The verdict of one cell for a runner, or undefined when the table has no such row. */
export function transitionVerdict(role: Role, beforeStanding: Standing, afterStanding: Standing, runner: Runner = "pytest"): Verdict | undefined {
  const reported = (standing: Standing): Standing => REPORTED_AS.find((entry) => entry.runners.includes(runner) && entry.standing === standing)?.as ?? standing;
  const before = reported(beforeStanding);
  const after = reported(afterStanding);
  const special = RUNNER_ROWS.find((row) => row.runner === runner && row.role === role && row.before === before);
  return (special?.verdicts ?? TRANSITIONS[role].rows[before])?.[AFTER.indexOf(after)];
}

/** The table as Markdown, as docs/concepts/how-tests-are-judged.md carries it. */
export function transitionTableMarkdown(): string {
  const lines: string[] = ["| standing | meaning |", "|---|---|", ...AFTER.map((standing) => `| ${standing} | ${STANDING_MEANS[standing]} |`), ""];
  for (const [role, table] of Object.entries(TRANSITIONS)) {
    lines.push(`**${role}**: ${table.means}`, "", `| before \\ after | ${AFTER.join(" | ")} |`, `|---|${AFTER.map(() => "---").join("|")}|`);
    for (const [before, verdicts] of Object.entries(table.rows)) lines.push(`| ${before} | ${(verdicts ?? []).join(" | ")} |`);
    lines.push("", ...table.notes.map((note) => `- ${note}`), "");
  }
  lines.push("Where a runner's own behaviour gives another row (the tables above are pytest's):", "");
  const named = (runners: readonly string[]): string => (runners.length > 1 ? `${runners.slice(0, -1).join(", ")} and ${runners.at(-1)}` : (runners[0] ?? ""));
  for (const entry of REPORTED_AS)
    lines.push(`- ${named(entry.runners)} report${entry.runners.length === 1 ? "s" : ""} ${entry.standing} as ${entry.as}: its cells are ${entry.as}'s. Why: ${entry.why}.`);
  for (const row of RUNNER_ROWS) lines.push(`- ${row.runner}, ${row.role}, before ${row.before}: ${row.verdicts.map((verdict, index) => `${AFTER[index]} ${verdict}`).join(", ")}. Why: ${row.why}.`);
  return lines.join("\n").trimEnd();
}
