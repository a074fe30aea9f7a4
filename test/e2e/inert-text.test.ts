import { afterEach, describe, expect, it } from "vitest";
import { type Output, paint, shown } from "../../src/log/output.js";
import { terminalInert } from "../../src/util/inert-text.js";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * What a person sees is the factory's (issue 55 §5). On 040a1c9 an implementer's summary reached `run`,
 * `status`, `show`, `report` and `approve` raw: a clear-screen, a fake green "merged" line, an OSC 8 link
 * labelled with a command, an OSC 52 clipboard write, a right-to-left override.
 */
const setUp = useLoopRepos(afterEach);
const ESC = "\u001b";
const EVIL = `done${ESC}[2J${ESC}[H${ESC}[32mP01#1 → merged${ESC}[0m ${ESC}]8;;https://evil.invalid${ESC}\\factory approve P01${ESC}]8;;${ESC}\\ ${ESC}]52;c;ZWNobyBwd25lZA==\u0007 \u202etxt.exe\r\u009b31m`;
/** Bytes that would act on a terminal rather than be shown. */
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("agent text reaches a person inert", () => {
  it("run, status, status ID, show, report and approve show an implementer's and a reviewer's control sequences as visible escapes", () => {
    const target = setUp({
      packet: 'gate = "human"',
      script: {
        P01: {
          implementer: [{ write: { "src/double.js": DOUBLE_JS }, result: { summary: EVIL, deviations: [{ from_packet: EVIL, reason: EVIL }] } }],
          reviewer: [{ findings: [{ severity: "minor", file: "src/double.js", line: 1, claim: EVIL, fix: EVIL }] }],
        },
      },
    });
    const outputs = [
      runCli(["run"], target.dir),
      runCli(["status"], target.dir),
      runCli(["status", "P01"], target.dir),
      runCli(["show", "P01"], target.dir),
      runCli(["report"], target.dir),
      runCli(["approve", "P01", "--yes"], target.dir),
    ];
    for (const [index, result] of outputs.entries()) {
      expect(ACTING.test(result.stdout), `command ${index}: ${JSON.stringify(result.stdout.slice(0, 400))}`).toBe(false);
      expect(ACTING.test(result.stderr), `command ${index}: ${JSON.stringify(result.stderr.slice(0, 400))}`).toBe(false);
    }
    const approve = outputs[5]?.stdout ?? "";
    expect(approve).toContain("\\x1b[2J");
    expect(approve).toContain("\\u202e");
    // The factory's facts come last, after every agent's words, right before the merge.
    expect(approve.lastIndexOf("held attempt 1")).toBeGreaterThan(approve.lastIndexOf("\\x1b[2J"));
    expect(outputs[5]?.code).toBe(0);
  }, 120_000);
});

describe("the terminal gets the factory's colours and nothing else", () => {
  it("turns paint's marks into colour codes, and an agent's own codes into visible escapes", () => {
    const painted = paint({ color: true } as Output, "green", "merged");
    expect(shown(`P01 ${painted}`, true)).toBe(`P01 ${ESC}[32mmerged${ESC}[0m`);
    expect(shown(`P01 ${painted}`, false)).toBe("P01 merged");
    expect(shown(`P01 ${ESC}[32mmerged${ESC}[0m`, true)).toBe("P01 \\x1b[32mmerged\\x1b[0m");
    expect(terminalInert(`a${ESC}[31mb\rc\td\ne\u202e\u0007`)).toBe("a\\x1b[31mb\\rc\td\ne\\u202e\\x07");
  });
});
