import { afterEach, expect, it } from "vitest";
import { lint } from "../../src/commands/lint.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { MINIMAL_CONFIG, packetToml } from "../helpers/packets.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

it("names a spec_commit that is not in the repository and a spec_path missing at it", async () => {
  repo = makeRepo();
  repo.write(".factory/config.toml", MINIMAL_CONFIG);
  const spec = repo.commit("config");
  repo.write("packets/A01-ghost.toml", packetToml("A01", { specCommit: "0123456789abcdef0123456789abcdef01234567" }));
  repo.write("packets/A02-nofile.toml", packetToml("A02", { specCommit: spec }));
  repo.commit("packets");
  const output = bufferOutput();
  expect(await lint({ cwd: repo.dir, ids: [], json: false, output })).toBe(2);
  const err = output.stderr.join("\n");
  expect(err).toContain("packets/A01-ghost.toml:3: spec_commit:");
  expect(err).toContain("packets/A02-nofile.toml:4: spec_path:");
});
