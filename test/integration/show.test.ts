import { afterEach, describe, expect, it } from "vitest";
import { show } from "../../src/commands/show.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

const setUp = useLoopRepos(afterEach);

describe("factory run --json", () => {
  it("streams one JSON object per event on stdout, and nothing else; other lines go to stderr", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, stdout, out } = await target.run({ json: true });
    expect(code).toBe(0);
    const events = stdout.map((line) => JSON.parse(line) as { kind: string; ts: string; outcome?: string });
    expect(events[0]).toMatchObject({ kind: "run-start", packets: 1 });
    expect(events.map((event) => event.kind)).toEqual(expect.arrayContaining(["step", "agent", "gate", "outcome", "run-end"]));
    expect(events.find((event) => event.kind === "outcome")).toMatchObject({ packet: "P01", outcome: "merged" });
    expect(events.every((event) => !Number.isNaN(Date.parse(event.ts)))).toBe(true);
    expect(out).toContain("morning brief: factory report");
  }, 60_000);
});

describe("factory show ID", () => {
  it("shows each attempt: the calls and their cost, the gates with the failing one's output, the rulings with evidence, and the decisions", async () => {
    const wrong = "export function double(n) {\n  return n * 3;\n}\n";
    const target = setUp({
      packet: 'gate = "human"',
      script: {
        P01: {
          implementer: [
            { write: { "src/double.js": wrong }, cost: 0.25 },
            { write: { "src/double.js": DOUBLE_JS }, cost: 0.5 },
          ],
          reviewer: [{ evidence: "src/double.js:2", cost: 0.1 }],
        },
      },
    });
    expect((await target.run()).code).toBe(0);
    const output = bufferOutput();
    expect(await show({ cwd: target.dir, id: "P01", output })).toBe(0);
    const text = output.text();
    expect(text).toContain("P01  awaiting_human  Add double");
    expect(text).toContain("spend: implementer $0.75 (2 calls), reviewer $0.10 (1 call)");
    expect(text).toMatch(/attempt 1\n {2}claimed [^\n]+\n/);
    expect(text).toMatch(/ {2}implementer \(standard m-standard\): ok, \d+s, \$0\.25/);
    expect(text).toMatch(/ {2}gate test: fail — 1 planted test\(s\) not passing of 2\n {4}\$ node --test-reporter=junit /);
    expect(text).toMatch(/ {2}decided: retry — gate test failed[^\n]*\n {4}> Gate "test" failed[^\n]*\n {6}[^\n]*test\/double.test.js/);
    expect(text).toMatch(/attempt 2\n/);
    expect(text).toContain("  review: accept; held 1, violated 0, unverifiable 0\n    doubles: held at src/double.js:2");
    expect(text).toContain("next: factory diff P01, then factory approve P01 or factory reject P01");
  }, 60_000);

  it("names a packet it does not know, with exit 2", async () => {
    const target = setUp({ script: {} });
    const output = bufferOutput();
    expect(await show({ cwd: target.dir, id: "P99", output })).toBe(2);
    expect(output.text()).toContain('no packet "P99"');
  });
});
