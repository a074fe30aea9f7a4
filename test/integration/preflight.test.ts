import { afterEach, describe, expect, it } from "vitest";
import { doctor } from "../../src/commands/doctor.js";
import { bufferOutput } from "../../src/log/output.js";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/** Before anything is claimed or spent: what `run` checks, and `doctor` prints. */
const setUp = useLoopRepos(afterEach);
const honest = { write: { "src/double.js": DOUBLE_JS } };

describe("preflight", () => {
  it("refuses a run whose gate program is not on PATH or whose surface dir does not exist, naming the config key; nothing is claimed", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."', 'dir = "app"').replace('run = "node --test', 'run = "no-such-runner --test'));
    target.commit("a broken config");
    const { code, out } = await target.run();
    expect(out).toContain('factory run refused: surface "app": dir "app" is not a directory at the tip of main; fix [surfaces.app] dir');
    expect(out).toContain('factory run refused: surface "app": gate "test" runs "no-such-runner", which is not on PATH');
    expect(code).toBe(2);
    expect(await target.events()).toEqual([]);
  });

  it("doctor prints every check, ok on a sound setup and FAIL with the fix on a broken one", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const sound = bufferOutput();
    expect(await doctor({ cwd: target.dir, models: false, output: sound })).toBe(0);
    expect(sound.text()).toMatch(/ok {4}sandbox \(bubblewrap\) starts/);
    expect(sound.text()).toMatch(/ok {4}surface "app": gate "test" program "node" is on PATH/);
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('run = "node --test', 'run = "no-such-runner --test'));
    target.commit("a broken config");
    const broken = bufferOutput();
    expect(await doctor({ cwd: target.dir, models: false, output: broken })).toBe(1);
    expect(broken.text()).toMatch(/FAIL {2}surface "app": gate "test" program "no-such-runner" is on PATH\n {6}surface "app": gate "test" runs "no-such-runner", which is not on PATH/);
  });
});
