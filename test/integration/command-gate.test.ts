import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GateConfig, Surface } from "../../src/config/types.js";
import { runCommandGate, surfaceFiles } from "../../src/gates/command.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "factory-gate-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const surface = (gates: GateConfig[] = [], sub = "."): Surface => ({ name: "app", dir: sub, install: undefined, gates, network: false });
const gate = (run: string, extra: Partial<GateConfig> = {}): GateConfig => ({ name: "g", run, files: undefined, fix: undefined, tests: false, timeoutMs: undefined, ...extra });
const junit = (cases: string) => `printf '%s' '<testsuites><testsuite>${cases}</testsuite></testsuites>' > {junit}`;

type Options = { changed?: string[]; baseline?: { id: string; outcome: "passed" | "failed" }[]; timeoutMs?: number; measuring?: boolean; finishedOnBaseline?: boolean };

async function runGate(config: GateConfig, options: Options = {}) {
  const { report } = await runCommandGate({
    gate: config,
    surface: surface([config]),
    worktree: dir,
    changed: options.changed ?? [],
    runDir: dir,
    timeoutMs: options.timeoutMs ?? 10_000,
    baseline: config.tests && !options.measuring ? (options.baseline ?? []) : undefined,
    finishedOnBaseline: options.finishedOnBaseline ?? false,
  });
  return report;
}

describe("command gates", () => {
  it("read a JUnit report only when it is a regular file: a FIFO or a link there is refused, not followed or waited on", async () => {
    const tests = { tests: true };
    const fifo = await runGate(gate("mkfifo {junit}", tests));
    expect(fifo).toMatchObject({ status: "fail", summary: expect.stringContaining("its JUnit report is not a regular file (a link, FIFO or device); it was not read") });
    const link = await runGate(gate("ln -s /dev/zero {junit}", tests));
    expect(link).toMatchObject({ status: "fail", summary: expect.stringContaining("not a regular file") });
    const honest = await runGate(gate(junit('<testcase classname="t" name="a"/>'), tests), { baseline: [{ id: "t::a", outcome: "passed" }] });
    expect(honest.status).toBe("pass");
  });

  it("run in batches when the changed files do not fit on one command line, and fail when any batch fails", async () => {
    // 6,000 paths of 50 characters: 300 KB, past the 128 KiB Linux allows `sh -c` its command (E2BIG: an environment error before).
    const changed = Array.from({ length: 6_000 }, (_, index) => `src/${"deep/".repeat(8)}file-${String(index).padStart(5, "0")}.js`);
    const lines = gate('printf "%s\\n" {files} >> seen.txt');
    expect(await runGate(lines, { changed })).toMatchObject({ status: "pass" });
    const seen = readFileSync(join(dir, "seen.txt"), "utf8").trim().split("\n");
    expect(seen).toEqual(changed);
    const failing = gate(`case "{files}" in *file-05999*) exit 4;; esac`);
    expect(await runGate(failing, { changed })).toMatchObject({ status: "fail", exitCode: 4, summary: expect.stringMatching(/failed \(exit 4\) \(batch \d of \d\)/) });
  });

  it("pass on exit 0 and fail on another exit code, recording command and exit code", async () => {
    expect(await runGate(gate("true"))).toMatchObject({ status: "pass", command: "true", exitCode: 0 });
    expect(await runGate(gate("exit 3"))).toMatchObject({ status: "fail", exitCode: 3, summary: "failed (exit 3)" });
  });

  it("substitute {tests} with the planted tests when they run on their own, else nothing, or the default {tests|…} names", async () => {
    const run = async (line: string, tests?: string[]) =>
      (
        await runCommandGate({
          gate: gate(line),
          surface: surface([gate(line)]),
          worktree: dir,
          changed: [],
          runDir: dir,
          timeoutMs: 10_000,
          baseline: undefined,
          finishedOnBaseline: false,
          ...(tests ? { tests } : {}),
        })
      ).report.command;
    expect(await run("echo {tests}")).toBe("echo ");
    expect(await run("echo {tests}", ["test/a b.test.js"])).toBe("echo 'test/a b.test.js'");
    expect(await run("node --test {tests|test/ spec/}")).toBe("node --test test/ spec/");
    expect(await run("node --test {tests|test/}", ["test/x.test.js"])).toBe("node --test test/x.test.js");
  });

  it("call a missing tool or a timeout the environment's error, not the work's failure", async () => {
    expect(await runGate(gate("no-such-tool-xyz --check"))).toMatchObject({ status: "error", summary: expect.stringContaining("command not found") });
    expect(await runGate(gate("sleep 5"), { timeoutMs: 300 })).toMatchObject({ status: "error", summary: expect.stringContaining("timed out") });
  });

  it("substitute {files} with the surface's changed files matching the glob, and skip when there are none", async () => {
    const report = await runGate(gate("echo {files}", { files: "**/*.py" }), { changed: ["a.py", "docs/b.md", "pkg/c d.py"] });
    expect(report.command).toBe("echo a.py 'pkg/c d.py'");
    expect(await runGate(gate("echo {files}", { files: "**/*.py" }), { changed: ["docs/b.md"] })).toMatchObject({ status: "skipped" });
    expect(surfaceFiles(surface([], "api"), "**/*.py", ["api/x.py", "web/y.py", "api/z.ts"])).toEqual(["x.py"]);
  });

  it("a tests gate that runs zero tests fails", async () => {
    expect(await runGate(gate(junit(""), { tests: true }))).toMatchObject({ status: "fail", summary: "ran zero tests" });
  });

  it("a {tap} gate's report is read as TAP (ava's), and one that writes none says {tap}", async () => {
    const tap = ["TAP version 13", "ok 1 - math › adds", "not ok 2 - math › halves", "1..2"].map((line) => `'${line}'`).join(" ");
    const report = await runGate(gate(`printf '%s\\n' ${tap} > {tap}; exit 1`, { tests: true }), {
      baseline: [
        { id: "adds", outcome: "passed" },
        { id: "halves", outcome: "passed" },
      ],
    });
    expect(report).toMatchObject({ status: "fail", summary: "1 regression(s) of 2", findings: [{ file: "halves", message: "passed at the baseline and fails now" }] });
    expect(await runGate(gate("true # {tap}", { tests: true }), { measuring: true })).toMatchObject({ status: "error", summary: expect.stringContaining("wrote no TAP report to {tap}") });
  });

  it("a tests gate that writes no JUnit report is an environment error while measuring, and the change's failure after the baseline wrote one", async () => {
    expect(await runGate(gate("true # {junit}", { tests: true }), { measuring: true })).toMatchObject({ status: "error", summary: expect.stringContaining("wrote no JUnit report") });
    expect(await runGate(gate("true # {junit}", { tests: true }))).toMatchObject({ status: "fail", summary: expect.stringContaining("it did on the baseline") });
  });

  it("a gate that hangs on the change after finishing on the baseline fails the work; without a baseline run it is the environment's", async () => {
    const hang = gate(`${junit('<testcase name="a"/>')}; sleep 5`, { tests: true });
    expect(await runGate(hang, { timeoutMs: 300, finishedOnBaseline: true })).toMatchObject({ status: "fail", summary: expect.stringContaining("it finished on the baseline") });
    expect(await runGate(hang, { timeoutMs: 300 })).toMatchObject({ status: "error", summary: expect.stringContaining("timed out") });
    expect(await runGate(gate("kill -9 $$", { tests: true }), { finishedOnBaseline: true })).toMatchObject({ status: "fail", summary: expect.stringContaining("SIGKILL") });
  });

  it("a tests gate fails when the runner exits non-zero with no failing case, although every case passed", async () => {
    const report = await runGate(gate(`${junit('<testcase name="ok"/>')}; exit 2`, { tests: true }), { baseline: [{ id: "ok", outcome: "passed" }] });
    expect(report).toMatchObject({ status: "fail", summary: expect.stringContaining("exited 2 but its report shows no failing test") });
  });

  it("a tests gate passes despite a non-zero exit when every failure already failed at the baseline", async () => {
    const cases = `<testcase name="old"><failure/></testcase><testcase name="ok"/>`;
    const report = await runGate(gate(`${junit(cases)}; exit 1`, { tests: true }), {
      baseline: [
        { id: "old", outcome: "failed" },
        { id: "ok", outcome: "passed" },
      ],
    });
    expect(report).toMatchObject({ status: "pass", summary: "1/2 passed; 1 already failing at the baseline (not blamed)" });
  });
});
