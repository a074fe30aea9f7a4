import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePath } from "../../src/loop/context.js";
import { eventually } from "../helpers/eventually.js";
import { DOUBLE_JS, DOUBLE_TEST_FOR, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * `.factory/state` deleted by a person while a run works (issue 40 §3): the run noticed nothing and, with
 * its history gone, claimed the packet it had already landed again. Now the run stops deciding on a ledger
 * that is not the one it acted on, and the next run records what the target's trailers prove.
 */
const setUp = useLoopRepos(afterEach);
const TRIPLE_JS = "export function triple(n) {\n  return n * 3;\n}\n";

describe("the state directory deleted during a run", () => {
  it("stops the run before anything more is decided: the packet it landed is never claimed again, and the next run records it from the trailers", async () => {
    const target = setUp({ script: {} });
    const go = join(target.dir, ".git", "factory-test-go");
    // P02's implementer holds, once started, until the test has deleted the state directory.
    const hold = `touch started && while [ ! -e '${go}' ]; do sleep 0.05; done; rm -f started`;
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] }, P02: { implementer: [{ write: { "src/triple.js": TRIPLE_JS }, run: hold }] } });
    const p01 = target.read("packets/P01-double.toml");
    target.write("packets/P02-triple.toml", p01.replaceAll("P01", "P02").replace("Add double", "Add triple").replace("src/double.js", "src/triple.js"));
    target.write("packets/supplied/P02/test/triple.test.js", DOUBLE_TEST_FOR("triple", 7, 21));
    target.commit("a second packet");

    const running = target.run();
    await eventually(() => existsSync(join(worktreePath(target.dir, "P02"), "started")), "P02's implementer to start");
    rmSync(join(target.dir, ".factory", "state"), { recursive: true, force: true }); // a person's rm -rf
    writeFileSync(go, "");
    const { code, out } = await running;
    expect(out).toMatch(/\.factory\/state\/ledger\.jsonl was deleted(, replaced or cut short| or replaced) while this process was using it/);
    expect(out).toContain("the next `factory run` records those as merged (never attempts them again)");
    expect(code).toBe(1);
    // P01 landed once and was never claimed again.
    expect(out.match(/P01#\d+ worktree:/g)).toHaveLength(1);
    const landed = (): string[] => target.git("log", "--format=%(trailers:key=Factory-Packet,valueonly)", "main").split("\n").filter(Boolean);
    expect(landed().sort()).toEqual(["P01", "P02"]);

    // The next run: what the trailers prove is recorded, nothing is attempted or landed again.
    const next = await target.run();
    expect(next.code).toBe(0);
    expect(next.out).not.toMatch(/P0[12]#\d+ worktree:/);
    expect(landed().sort()).toEqual(["P01", "P02"]);
    expect((await target.record("P01"))?.status.state).toBe("merged");
    expect((await target.record("P02"))?.status.state).toBe("merged");
  }, 90_000);
});
